import Foundation

/// Runs a program and collects what it printed; for the packaging tests.
enum Shell {
    struct Result {
        let status: Int32
        let output: String
    }

    /// The repository's root, found from this file's path.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .path

    @discardableResult
    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: String = repository)
        throws -> Result
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// Whether `program` is on PATH (where `run` finds it, through env) or
    /// in the sbin folders a user's PATH may lack.
    static func exists(_ program: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        return folders.contains { FileManager.default.isExecutableFile(atPath: $0 + "/" + program) }
    }
}
