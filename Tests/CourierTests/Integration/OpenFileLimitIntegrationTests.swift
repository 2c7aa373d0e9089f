import Foundation
import Testing

/// A round that runs out of file descriptors (its own limit, not the
/// files' fault) stops with the error and leaves the dropped files where
/// they are: it never flags a good record as unreadable.
@Suite(.tags(.integration)) struct OpenFileLimitTests {
    @Test("a round out of open files stops with the error and flags no record; a round with room sends every one")
    func runningOutOfOpenFilesFlagsNothing() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(records: 1000, sendingTo: server, in: TemporaryDirectory("nofile"))
        // Where the limit is met depends on timing (a dropped file, the
        // ledger, a socket); wherever it is, the round stops and nothing is
        // flagged.
        let limited = try spool.run(openFiles: 300)

        #expect(limited.status != 0, "\(limited.output)")
        #expect(limited.output.contains("Too many open files"), "\(limited.output)")
        let attention = try spool.names(in: "needsAttention")
        #expect(attention.isEmpty, "good records flagged: \(attention.prefix(3))")

        let again = try spool.binary.run(["--config", spool.config, "run"])
        #expect(again.status == 0, "\(again.error)")
        #expect(try spool.names(in: "sent").count == 1000)
    }

    /// At 700, groups are 256 (their floor), more than a third of what the
    /// limit leaves: three groups and the connections did not fit, and
    /// reading ahead while two groups were out used the last descriptors
    /// (the ledger's open on the commit thread failed; 0 of 4 rounds sent
    /// everything before the fix, 4 of 4 before reading ahead).
    @Test(
        "a round at an open-file limit of 700 sends every record: what is read ahead gives way to groups out",
        arguments: 0..<3)
    func aRoundAtSevenHundredOpenFilesSendsEveryRecord(attempt: Int) throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(records: 1500, sendingTo: server, in: TemporaryDirectory("nofile700"))
        let limited = try spool.run(openFiles: 700)
        #expect(limited.status == 0, "\(limited.output)")
        #expect(try spool.names(in: "sent").count == 1500)
    }

    struct Spool {
        let directory: TemporaryDirectory
        let binary: CourierBinary
        var config: String { directory.path + "/courier.conf" }

        /// A round of the binary under `ulimit -n`, both limits, so that
        /// courier cannot raise its own.
        func run(openFiles: Int) throws -> Shell.Result {
            try Shell.run([
                "sh", "-c", "ulimit -n \(openFiles) && exec \"$0\" --config \"$1\" run", binary.path, config,
            ])
        }

        func names(in folder: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/" + folder)
        }
    }

    /// A spool of `records` dropped records, for one subscriber at `server`.
    static func spool(records: Int, sendingTo server: LoopbackServer, in directory: TemporaryDirectory) throws -> Spool
    {
        try directory.write(
            """
            [courier]
            spool = spool
            settle = 0s
            [subscriber alpha]
            url = \(server.url)
            """, to: "courier.conf")
        let spool = Spool(directory: directory, binary: try CourierBinary.locate())
        #expect(try spool.binary.run(["--config", spool.config, "init"]).status == 0)
        for index in 0..<records {
            try #"{"id":"n-\#(index)","kind":"sleep","data":{"n":\#(index)}}"#.write(
                toFile: directory.path + "/spool/queued/n-\(index).json", atomically: false, encoding: .utf8)
        }
        return spool
    }
}
