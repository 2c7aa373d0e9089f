import Foundation
import Glibc
import Testing

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
