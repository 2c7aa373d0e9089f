import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierSpool

/// Issue 12's operator tools with the built binary: hold and release,
/// deferred entries in status, send-now --attention.
@Suite(.serialized, .tags(.integration)) struct OperatorToolsTests {
    static func queue(_ directory: TemporaryDirectory, _ id: String) throws {
        try directory.write(#"{"id":"\#(id)","kind":"sleep"}"#, to: "spool/queued/\(id).json")
    }

    @Test("hold keeps a subscriber's entries in queued/, status says who and why, release lets them go")
    func holdAndRelease() throws {
        let server = try LoopbackServer(status: 201)
        let (directory, binary, config) = try EndToEndTests.setUp(server: server)
        let spool = directory.path + "/spool"
        let held = try binary.run(["--config", config, "hold", "alpha", "--reason", "maintenance until noon"])
        #expect(held.status == 0, "\(held.error)")
        #expect(held.output.contains("alpha held since "))
        #expect(FileManager.default.fileExists(atPath: spool + "/.courier/held/alpha"))

        try Self.queue(directory, "r-1")
        let round = try binary.run(["--config", config, "run"])
        #expect(round.output.contains("1 accepted"), "intake still takes records: \(round.output)")
        #expect(round.output.contains("alpha held: 1 left queued"), "\(round.output)")
        #expect(server.requests.isEmpty)
        #expect(FileManager.default.fileExists(atPath: spool + "/queued/r-1@alpha.json"))

        let status = try binary.run(["--config", config, "status"])
        #expect(status.output.contains("held (rounds send them nothing"), "\(status.output)")
        #expect(status.output.contains("  alpha since "))
        #expect(status.output.contains(": maintenance until noon"))
        let json = try binary.run(["--config", config, "status", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let holds = try #require(object["held"] as? [[String: String]])
        #expect(holds.first?["subscriber"] == "alpha" && holds.first?["reason"] == "maintenance until noon")

        let released = try binary.run(["--config", config, "release", "alpha"])
        #expect(released.output.contains("alpha released (held since "), "\(released.output)")
        #expect(released.output.contains("the next round sends its 1 queued entry"))
        _ = try binary.run(["--config", config, "run"])
        #expect(server.countsByKey["r-1"] == 1)
        let again = try binary.run(["--config", config, "release", "alpha"])
        #expect(again.status == 0 && again.output == "alpha was not held\n")
        let log = try binary.run(["--config", config, "log", "--event", "held"])
        #expect(log.output.contains("held by a person: maintenance until noon"))

        // For scripts: the same fields as status --json's held[].
        let heldJSON = try binary.run(["--config", config, "hold", "alpha", "--reason", "again", "--json"])
        let hold = try #require(try JSONSerialization.jsonObject(with: Data(heldJSON.output.utf8)) as? [String: Any])
        #expect(hold["subscriber"] as? String == "alpha" && hold["held"] as? Bool == true)
        #expect(hold["reason"] as? String == "again" && hold["since"] is String)
        let releasedJSON = try binary.run(["--config", config, "release", "alpha", "--json"])
        let release = try #require(
            try JSONSerialization.jsonObject(with: Data(releasedJSON.output.utf8)) as? [String: Any])
        #expect(release["held"] as? Bool == false && release["queued"] as? Int == 0)
    }

    @Test("a hold is a file: touch holds, rm releases")
    func holdWithTouchAndRm() throws {
        let server = try LoopbackServer(status: 201)
        let (directory, binary, config) = try EndToEndTests.setUp(server: server)
        let spool = directory.path + "/spool"
        #expect(FileManager.default.createFile(atPath: spool + "/.courier/held/alpha", contents: nil))
        try Self.queue(directory, "r-1")
        _ = try binary.run(["--config", config, "run"])
        #expect(server.requests.isEmpty)
        try FileManager.default.removeItem(atPath: spool + "/.courier/held/alpha")
        _ = try binary.run(["--config", config, "run"])
        #expect(server.countsByKey["r-1"] == 1)
    }

    @Test("hold refuses a name that is not a configured subscriber (exit 65)")
    func holdRefusesUnknownSubscribers() throws {
        let server = try LoopbackServer(status: 201)
        let (directory, binary, config) = try EndToEndTests.setUp(server: server)
        defer { withExtendedLifetime(directory) {} }
        let result = try binary.run(["--config", config, "hold", "alpah"])
        #expect(result.status == 65)
        #expect(result.error.contains("no [subscriber alpah] in the configuration"))
        #expect(try binary.run(["--config", config, "hold"]).status == 64)
        #expect(try binary.run(["--config", config, "release", "a/b"]).status == 64)
    }

    @Test(
        "why says a 503 waits for a person and what sends it again; send-now --attention does it, send-now alone does not"
    )
    func whyTellsTheTruth() throws {
        let server = try LoopbackServer { _, count in .respond(.json(count == 1 ? 503 : 201, "{}")) }
        let (directory, binary, config) = try EndToEndTests.setUp(server: server)
        try Self.queue(directory, "r-1")
        _ = try binary.run(["--config", config, "run"])
        let why = try binary.run(["--config", config, "why", "r-1"])
        #expect(why.output.contains("the subscriber was unavailable (HTTP 503); a background round tries once"))
        #expect(why.output.contains("Nothing retries it by itself: `courier send-now --attention` sends it again now"))

        let plain = try binary.run(["--config", config, "send-now"])
        #expect(plain.output.contains("0 sent"), "\(plain.output)")
        #expect(server.countsByKey["r-1"] == 1, "send-now alone leaves needsAttention/ to a person")
        let again = try binary.run(["--config", config, "send-now", "--attention"])
        #expect(again.status == 0, "\(again.error)")
        #expect(again.output.contains("1 sent, 0 need attention, 1 back from needsAttention/"), "\(again.output)")
        let after = try binary.run(["--config", config, "why", "r-1"])
        #expect(after.output.contains("r-1@alpha.json is in sent/"))
        #expect(try binary.run(["--config", config, "run", "--attention"]).status == 64)
    }

    @Test("status counts deferred entries and shows the next attempt; ls -l shows it as the entry's time")
    func statusShowsDeferredEntries() throws {
        let server = try LoopbackServer(status: 503)
        let (directory, binary, config) = try EndToEndTests.setUp(
            server: server, subscriberExtra: "retry-schedule = 10m 1h")
        try Self.queue(directory, "r-1")
        let round = try binary.run(["--config", config, "run"])
        #expect(round.output.contains("1 deferred"), "\(round.output)")
        let status = try binary.run(["--config", config, "status"])
        #expect(status.output.contains("deferred: 1 in queued/ after transient failures"), "\(status.output)")
        #expect(status.output.contains(", next attempt 20"))
        let json = try binary.run(["--config", config, "status", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let deferred = try #require(object["deferred"] as? [String: Any])
        #expect(deferred["count"] as? Int == 1 && deferred["due"] as? Int == 0)
        let next = try #require(deferred["nextAttempt"] as? String)
        let listing = try Shell.run(
            ["ls", "-l", "--time-style=+%Y-%m-%dT%H:%M:%S", directory.path + "/spool/queued/r-1@alpha.json"],
            environment: ["TZ": "UTC"])
        #expect(listing.output.contains(String(next.prefix(19))), "\(listing.output) \(next)")

        let skipped = try binary.run(["--config", config, "run"])
        #expect(skipped.output.contains("1 not due yet"), "\(skipped.output)")
        #expect(server.countsByKey["r-1"] == 1)
    }
}
