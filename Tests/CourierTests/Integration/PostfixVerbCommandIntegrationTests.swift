import Foundation
import Glibc
import Testing

@testable import CourierSink
@testable import CourierSpool

/// `delete`, `send-now NAME…` and the bulk totals from the built binary.
@Suite(.serialized, .tags(.integration)) struct PostfixVerbCommandTests {
    @Test("delete of a queued entry prints its line and the total; a pick that finds nothing says so")
    func deleteQueuedAndTotals() throws {
        let spool = try BulkMoveTests.spool([
            (.queued, "q-1@alpha.json", 60), (.queued, "q-2@alpha.json", 60),
            (.needsAttention, "invalid-20261130T070000Z-x.json", 60), (.needsAttention, "n-1@alpha.json", 60),
        ])
        let binary = try CourierBinary.locate()
        let deleted = try binary.run(["--spool", spool.path, "delete", "q-1@alpha"])
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(deleted.output == "queued/q-1@alpha.json -> deleted\ndeleted: 1\n", "\(deleted.output)")
        #expect(try spool.names(in: .queued) == ["q-2@alpha.json"])

        let resent = try binary.run(["--spool", spool.path, "resend", "--all"])
        #expect(resent.status == 0, "\(resent.error)")
        #expect(resent.output.hasSuffix("resent: 1\n"), "\(resent.output)")
        #expect(
            resent.error.contains("skipped 1 invalid file (needsAttention/invalid-20261130T070000Z-x.json)"),
            "\(resent.error)")

        let nothing = try binary.run(["--spool", spool.path, "ack", "--older-than", "30d"])
        #expect(nothing.status == 0, "\(nothing.error)")
        #expect(nothing.output == "acknowledged: 0\n", "\(nothing.output)")
        #expect(nothing.error.contains("ack: nothing matched --older-than 30d in needsAttention/"), "\(nothing.error)")

        let json = try binary.run(["--spool", spool.path, "delete", "--all", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let skipped = try #require(object["skipped"] as? [[String: String]])
        #expect(skipped == [["entry": "invalid-20261130T070000Z-x.json", "state": "needsAttention"]])
        #expect(try spool.names(in: .queued) == ["n-1@alpha.json", "q-2@alpha.json"], "--all left queued/ alone")
    }

    @Test("delete of a queued entry waits for the round that holds the spool, and says so")
    func deleteWaitsForTheRound() throws {
        let spool = try BulkMoveTests.spool([(.queued, "q-1@alpha.json", 60)])
        let binary = try CourierBinary.locate()
        var lock = try spool.spool.lockRound(wait: false)
        try #require(lock != nil, "no round runs yet")
        let errors = TemporaryDirectory("wait")
        let process = binary.start(["--spool", spool.path, "delete", "q-1@alpha"])
        #expect(FileManager.default.createFile(atPath: errors.path + "/err", contents: nil))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors.path + "/err"))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        _ = try awaitLine(containing: "waiting for the round", in: errors.path + "/err")
        #expect(try spool.names(in: .queued) == ["q-1@alpha.json"], "nothing is deleted while a round runs")
        lock = nil
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try spool.names(in: .queued).isEmpty)
    }

    @Test("send-now NAME sends that entry alone, says where it went, and refuses one that is not queued")
    func sendNowNamed() throws {
        let server = try LoopbackServer(status: 201)
        let directory = TemporaryDirectory("sendnow")
        try directory.write(
            "[courier]\nspool = spool\nsettle = 0s\n[subscriber alpha]\nurl = \(server.url)\n", to: "c.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/c.conf"
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        for id in ["a", "b"] {
            try directory.write(#"{"id":"\#(id)","kind":"sleep"}"#, to: "spool/queued/\(id)@alpha.json")
        }
        try directory.write(#"{"id":"f","kind":"sleep"}"#, to: "spool/failed/f@alpha.json")
        let result = try binary.run(["--config", config, "send-now", "b@alpha", "f@alpha"])
        #expect(result.status == 65, "one name was refused: \(result.error)")
        #expect(result.output.contains("queued/b@alpha.json -> sent/\n"), "\(result.output)")
        #expect(result.output.contains("not named: 1 left queued"), "\(result.output)")
        #expect(result.error.contains("not sent: f@alpha: is in failed/f@alpha.json"), "\(result.error)")
        #expect(result.error.contains("courier resend f@alpha"), "\(result.error)")
        #expect(server.requests.map { $0.header("idempotency-key") } == ["b"])
        #expect(FileManager.default.fileExists(atPath: directory.path + "/spool/queued/a@alpha.json"))

        let none = try binary.run(["--config", config, "send-now", "nosuch@alpha"])
        #expect(none.status == 65 && !none.output.contains("round "), "no round for nothing: \(none.output)")
        let mixed = try binary.run(["--config", config, "send-now", "--attention", "a@alpha"])
        #expect(mixed.status == 64, "\(mixed.error)")
    }
}

/// A foreground round's progress line: on a terminal only.
@Suite(.serialized, .tags(.integration)) struct ProgressLineTests {
    /// A configuration whose subscriber takes 300 ms per request, one at a time.
    static func slowSetUp(entries: Int) throws -> (TemporaryDirectory, CourierBinary, String, LoopbackServer) {
        let server = try LoopbackServer { _, _ in
            usleep(300_000)
            return .respond(HTTPResponse(status: 201, headers: [], body: Array("{}".utf8)))
        }
        let directory = TemporaryDirectory("progress")
        try directory.write(
            "[courier]\nspool = \(directory.path)/spool\nsettle = 0s\n[subscriber alpha]\nurl = \(server.url)\n"
                + "concurrency = 1\n", to: "c.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/c.conf"
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        for index in 0..<entries {
            try directory.write(#"{"id":"p\#(index)","kind":"sleep"}"#, to: "spool/queued/p\(index)@alpha.json")
        }
        return (directory, binary, config, server)
    }

    @Test("in a pipe a foreground round prints its summary and draws nothing")
    func quietInAPipe() throws {
        let (directory, binary, config, server) = try Self.slowSetUp(entries: 5)
        let result = try withExtendedLifetime((directory, server)) { try binary.run(["--config", config, "send-now"]) }
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.isEmpty, "\(result.error)")
        #expect(result.output.contains("5 sent"), "\(result.output)")
    }

    @Test(
        "on a terminal it says it waits for the round that holds the spool, then draws its progress on one line",
        .needs("script"))
    func drawnOnATerminal() throws {
        let (directory, binary, config, server) = try Self.slowSetUp(entries: 6)
        let spool = try Spool(path: directory.path + "/spool")
        var lock = try spool.lockRound(wait: false)
        try #require(lock != nil, "no round runs yet")
        let transcript = directory.path + "/transcript"
        #expect(FileManager.default.createFile(atPath: transcript, contents: nil))
        // script(1) gives the round a pseudo-terminal for its output.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["script", "-qefc", "\(binary.path) --config \(config) send-now", "/dev/null"]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: transcript))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        _ = try awaitLine(containing: "waiting for the round that holds", in: transcript)
        lock = nil
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let text = try String(contentsOfFile: transcript, encoding: .utf8)
        #expect(text.contains("\rcourier: 1 sent, 0 need attention"), "\(text.debugDescription)")
        #expect(text.contains("~") && text.contains(" left"), "counted once a second in: \(text.debugDescription)")
        #expect(text.contains("6 sent"), "\(text)")
        #expect(server.requests.count == 6)
    }
}
