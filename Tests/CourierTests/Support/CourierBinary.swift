import Foundation
import Glibc
import Testing

/// The built `courier` executable, run as a person or systemd would.
struct CourierBinary {
    let path: String

    /// Next to the test bundle: `swift build --build-tests` builds both.
    static func locate() throws -> CourierBinary {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let candidate = executable.deletingLastPathComponent().appendingPathComponent("courier").path
        guard FileManager.default.isExecutableFile(atPath: candidate) else {
            throw TestFailure("no courier binary at \(candidate): run `swift build --build-tests` first")
        }
        return CourierBinary(path: candidate)
    }

    struct Result {
        let status: Int32
        let output: String
        let error: String
    }

    func run(
        _ arguments: [String], input: String? = nil, environment: [String: String] = [:], in directory: String? = nil
    ) throws -> Result {
        let process = start(arguments, environment: environment)
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        let error = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            error: String(decoding: err, as: UTF8.self))
    }

    /// Starts `courier sink` on a port the kernel picks (`--listen
    /// 127.0.0.1:0`), and returns once it listens, with that port: no other
    /// process can have taken it, as one found free and closed again could
    /// be. Standard error goes to `errors`, where the sink says its address.
    /// A `port` restarts a sink where an earlier one listened.
    func startSink(_ arguments: [String], errors: String, port: UInt16 = 0) throws -> (Process, UInt16) {
        guard FileManager.default.createFile(atPath: errors, contents: nil) else {
            throw TestFailure("cannot create \(errors)")
        }
        let sink = start(["sink", "--listen", "127.0.0.1:\(port)"] + arguments)
        sink.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        sink.standardOutput = FileHandle.nullDevice
        try sink.run()
        do {
            let line = try awaitLine(containing: "sink listening on 127.0.0.1:", in: errors)
            let address = line.split(separator: " ").first { $0.hasPrefix("127.0.0.1:") } ?? ""
            guard let port = UInt16(address.dropFirst("127.0.0.1:".count).prefix { $0 != "," }) else {
                throw TestFailure("no port in “\(line)”")
            }
            return (sink, port)
        } catch {
            sink.terminate()
            sink.waitUntilExit()
            throw error
        }
    }

    func start(_ arguments: [String], environment: [String: String] = [:]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "COURIER_CONFIG")
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        return process
    }
}

extension CourierBinary {
    /// `courier.conf` in `directory`: one subscriber, `hook`, at `url`,
    /// its spool `spool/` beside it, made with `courier init`, and intake
    /// without the settle wait. Returns the configuration's path.
    func initializeSpool(in directory: TemporaryDirectory, subscriberURL url: String) throws -> String {
        try directory.write(
            """
            [courier]
            spool = spool
            settle = 0s

            [subscriber hook]
            url = \(url)
            """, to: "courier.conf")
        let config = directory.path + "/courier.conf"
        let initialized = try run(["--config", config, "init"])
        #expect(initialized.status == 0, "\(initialized.error)")
        return config
    }
}
