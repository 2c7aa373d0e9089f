import Foundation
import Glibc
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// The built binary, driven the way a person or systemd drives it.
@Suite(.serialized, .tags(.integration)) struct EndToEndTests {
    /// A config file aimed at `server`, and its spool, initialised by the binary.
    static func setUp(server: LoopbackServer, extra: String = "", subscriberExtra: String = "") throws -> (
        TemporaryDirectory, CourierBinary, String
    ) {
        let directory = TemporaryDirectory("e2e")
        try directory.write(
            """
            [courier]
            spool = spool
            device-id = e2e
            settle = 0s
            \(extra)
            [subscriber alpha]
            url = \(server.url)
            concurrency = 4
            \(subscriberExtra)
            """, to: "courier.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/courier.conf"
        let initialised = try binary.run(["--config", config, "init"])
        #expect(initialised.status == 0, "\(initialised.error)")
        return (directory, binary, config)
    }

    @Test func aBadConfigExits78NamingFileAndLine() throws {
        let directory = TemporaryDirectory("e2e")
        try directory.write("[courier]\nsettle = soon\n[subscriber a]\nurl = http://127.0.0.1:1/\n", to: "courier.conf")
        let result = try CourierBinary.locate().run(["--config", directory.path + "/courier.conf", "check"])
        #expect(result.status == 78)
        #expect(
            result.error.contains(
                "courier: fatal: \(directory.path)/courier.conf:2: [courier] settle: `soon` is not a duration"))
    }

    @Test("status shows a broken configuration instead of hiding it, still shows the spool, and fails with 78")
    func statusSaysWhenTheConfigurationIsBroken() throws {
        let server = try LoopbackServer(status: 201)
        let (directory, binary, config) = try Self.setUp(server: server)
        try directory.write("[courier]\nsettle = soon\n", to: "broken.conf")
        let result = try binary.run([
            "--config", directory.path + "/broken.conf", "--spool", directory.path + "/spool", "status",
        ])
        // A script (or a monitoring check) must not read "all is well" from
        // a configuration the next round will refuse.
        #expect(result.status == 78, "\(result.error)")
        #expect(result.output.contains("configuration: \(directory.path)/broken.conf:2"), "\(result.output)")
        #expect(result.output.contains("queued"))
        _ = config
    }

    @Test("prune with a configuration it cannot read stops with exit 78 rather than assume 183 days")
    func pruneRefusesABrokenConfiguration() throws {
        let server = try LoopbackServer(status: 201)
        let (directory, binary, _) = try Self.setUp(server: server)
        try directory.write("[courier]\nretention = soon\n", to: "broken.conf")
        let result = try binary.run([
            "--config", directory.path + "/broken.conf", "--spool", directory.path + "/spool", "prune", "--dry-run",
        ])
        #expect(result.status == 78, "\(result.output) \(result.error)")
        let alone = try binary.run(
            ["--spool", directory.path + "/spool", "prune", "--dry-run"], environment: ["COURIER_CONFIG": ""])
        #expect(alone.status == 0, "without --config: found or default retention, \(alone.error)")
    }

    @Test(
        "why, log --subscriber and list --subscriber with a configuration they cannot read stop with exit 78, naming it",
        arguments: [["why", "queued/x.json"], ["log", "--subscriber", "alpha"], ["list", "--subscriber", "alpha"]])
    func readersRefuseABrokenConfiguration(_ command: [String]) throws {
        let server = try LoopbackServer(status: 201)
        let (directory, binary, _) = try Self.setUp(server: server)
        try directory.write(#"{"id":"x","kind":"sleep"}"#, to: "spool/queued/x.json")
        try directory.write("[courier]\nsettle = soon\n", to: "broken.conf")
        let result = try binary.run(
            ["--config", directory.path + "/broken.conf", "--spool", directory.path + "/spool"] + command)
        #expect(result.status == 78, "\(command): \(result.output) \(result.error)")
        #expect(result.error.contains("\(directory.path)/broken.conf:2"), "\(command): \(result.error)")
    }

    @Test func usageErrorsExit64() throws {
        let binary = try CourierBinary.locate()
        #expect(try binary.run(["frobnicate"]).status == 64)
        #expect(try binary.run(["--spool", "/nonexistent", "list", "--colour"]).status == 64)
        let version = try binary.run(["--version"])
        #expect(version.output == "courier \(CourierVersion.current)\n")
    }

    @Test func scriptsDropRecordsAndPeopleOperateWithMvAndTheCLI() throws {
        let server = try LoopbackServer { request, _ in
            request.header("idempotency-key") == "bad"
                ? .respond(.json(500, #"{"oops":true}"#)) : .respond(.json(201, "{}"))
        }
        let (directory, binary, config) = try Self.setUp(server: server)
        let spool = directory.path + "/spool"
        // A script: write into tmp/, then mv into queued/.
        try directory.write(#"{"id":"good","kind":"sleep"}"#, to: "spool/tmp/good.json")
        #expect(rename(spool + "/tmp/good.json", spool + "/queued/good.json") == 0)
        let enqueued = try binary.run(["--config", config, "enqueue", "-"], input: #"{"id":"bad","kind":"sleep"}"#)
        #expect(enqueued.status == 0, "\(enqueued.error)")
        let refused = try binary.run(["--config", config, "enqueue", "-"], input: #"{"kind":"sleep"}"#)
        #expect(refused.status == 65)
        #expect(refused.error.contains("standard input: record has no `id`"))

        let round = try binary.run(["--config", config, "run"])
        #expect(round.status == 0)
        #expect(round.output.contains("1 sent, 1 need attention"))

        let status = try binary.run(["--config", config, "status"])
        #expect(status.output.contains("needsAttention\t1\n"))
        #expect(status.output.contains("bad@alpha.json"))
        let why = try binary.run(["--config", config, "why", "bad"])
        #expect(why.output.contains("bad@alpha.json is in needsAttention/"))
        #expect(why.output.contains("HTTP 500"))
        let list = try binary.run(["--config", config, "list", "needsAttention"])
        #expect(list.output.hasPrefix("needsAttention\tbad\talpha\tsleep\t-\t"))

        // Resend with mv, as an operator would.
        #expect(rename(spool + "/needsAttention/bad@alpha.json", spool + "/queued/bad@alpha.json") == 0)
        _ = try binary.run(["--config", config, "run"])
        #expect(server.countsByKey["bad"] == 2)
        let ack = try binary.run(["--config", config, "ack", "bad@alpha"])
        #expect(ack.status == 0)
        #expect(FileManager.default.fileExists(atPath: spool + "/failed/bad@alpha.json"))

        let log = try binary.run(["--config", config, "log", "--event", "needsAttention"])
        #expect(log.output.split(separator: "\n").count == 2)
        let json = try binary.run(["--config", config, "log", "--json", "--subscriber", "alpha"])
        for line in json.output.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any])
        }
        let statusJSON = try binary.run(["--config", config, "status", "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(statusJSON.output.utf8)) as? [String: Any])
        #expect((object["counts"] as? [String: Int])?["failed"] == 1)
    }

    @Test func aRoundThatFindsTheLockHeldExitsZeroAtOnce() throws {
        let server = try LoopbackServer(status: 200)
        let (directory, binary, config) = try Self.setUp(server: server)
        let spool = try Spool(path: directory.path + "/spool")
        let held = try #require(try spool.lockRound(wait: false))
        let result = try binary.run(["--config", config, "run"])
        #expect(result.status == 0)
        #expect(result.output.contains("another round is running"))
        withExtendedLifetime(held) {}
    }

    /// kill -9 in the middle of a round of a few hundred records, then
    /// rounds until done: every record in sent/ once, nothing in two states.
    @Test func killNineMidRoundLosesAndDuplicatesNothing() throws {
        let gate = RequestGate()
        let server = try LoopbackServer { _, _ in
            gate.pass()
            return .respond(.json(201, "{}"))
        }
        let (directory, binary, config) = try Self.setUp(server: server)
        let spoolPath = directory.path + "/spool"
        let spool = try Spool(path: spoolPath)
        let count = 300
        for index in 0..<count {
            let body = #"{"id":"k-\#(index)","kind":"sleep"}"#
            try spool.deliverNewFile(Array(body.utf8), named: FileName("drop-\(index).json"), into: .queued)
        }
        var kills = 0
        // Each round is killed while the server holds its nth request (and
        // whatever else is in flight), however fast or slow the machine is.
        for requests in [20, 60, 100] {
            gate.hold(after: requests)
            let process = binary.start(["--config", config, "run"])
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let holding = gate.waitUntilHolding()
            #expect(holding, "the round never reached request \(requests) (\(gate.count) so far)")
            if holding && process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                kills += 1
            }
            process.waitUntilExit()
            gate.open()
        }
        var rounds = 0
        while rounds < 5 {
            let result = try binary.run(["--config", config, "run"])
            #expect(result.status == 0)
            rounds += 1
            if try spool.directory(.queued).sortedNames().isEmpty && spool.directory(.sending).sortedNames().isEmpty {
                break
            }
        }
        #expect(kills == 3, "a round was not killed mid-way: the test proved less")
        var seen: [FileName: Int] = [:]
        for state in SpoolState.allCases {
            for name in try spool.directory(state).sortedNames() { seen[name, default: 0] += 1 }
        }
        #expect(seen.values.allSatisfy { $0 == 1 }, "an item is in two states")
        let sent = try spool.directory(.sent).sortedNames()
        #expect(sent.count == count)
        #expect(Set(sent) == Set((0..<count).map { FileName("k-\($0)@alpha.json") }))
        let received = server.countsByKey
        #expect((0..<count).allSatisfy { received["k-\($0)", default: 0] >= 1 })
        let duplicates = received.values.reduce(0) { $0 + max(0, $1 - 1) }
        // A kill may land after a POST and before its commit: that item is
        // sent again with the same key. At most the in-flight ones (4) and
        // the ones waiting for the group commit (up to 256) per kill.
        #expect(duplicates <= kills * (4 + 256))
    }
}
