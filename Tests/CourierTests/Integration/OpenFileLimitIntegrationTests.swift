import Foundation
import Testing

/// A round that runs out of file descriptors (its own limit, not the
/// files' fault) stops with the error and leaves the dropped files where
/// they are: it never flags a good record as unreadable.
@Suite(.tags(.integration)) struct OpenFileLimitTests {
    @Test("a round out of open files stops with the error and flags no record; a round with room sends every one")
    func runningOutOfOpenFilesFlagsNothing() throws {
        let server = try LoopbackServer(status: 201)
        let directory = TemporaryDirectory("nofile")
        try directory.write(
            """
            [courier]
            spool = spool
            [subscriber alpha]
            url = \(server.url)
            """, to: "courier.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/courier.conf"
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        let records = 1000
        for index in 0..<records {
            try #"{"id":"n-\#(index)","kind":"sleep"}"#.write(
                toFile: directory.path + "/spool/queued/n-\(index).json", atomically: false, encoding: .utf8)
        }
        // Both limits, so that courier cannot raise its own. Where the limit
        // is met depends on timing (a dropped file, the ledger, a socket);
        // wherever it is, the round stops and nothing is flagged.
        let limited = try Shell.run([
            "sh", "-c", "ulimit -n 300 && exec \"$0\" --config \"$1\" run", binary.path, config,
        ])

        #expect(limited.status != 0, "\(limited.output)")
        #expect(limited.output.contains("Too many open files"), "\(limited.output)")
        let attention = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/needsAttention")
        #expect(attention.isEmpty, "good records flagged: \(attention.prefix(3))")

        let again = try binary.run(["--config", config, "run"])
        #expect(again.status == 0, "\(again.error)")
        let sent = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/sent")
        #expect(sent.count == records)
    }
}
