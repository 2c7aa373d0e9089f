import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierSpool

/// `courier list` and `courier status --ages` on a spool whose files have
/// known ages.
@Suite(.serialized, .tags(.integration)) struct QueueCommandTests {
    /// Subscribers alpha and beta; entries of known ages in several states.
    static func setUp() throws -> (TemporaryDirectory, CourierBinary, String) {
        let directory = TemporaryDirectory("queue")
        try directory.write(
            """
            [courier]
            spool = spool
            [subscriber alpha]
            url = http://127.0.0.1:1/
            [subscriber beta]
            url = http://127.0.0.1:1/
            """, to: "courier.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/courier.conf"
        let initialised = try binary.run(["--config", config, "init"])
        #expect(initialised.status == 0, "\(initialised.error)")
        let spool = try Spool(path: directory.path + "/spool")
        for (name, state, age) in [
            ("q1@alpha.json", SpoolState.queued, 60), ("q2@alpha.json", .queued, 2 * 3600),
            ("q3@beta.json", .queued, 600), ("n1@alpha.json", .needsAttention, 3 * 86_400),
            ("s1@alpha.json", .sent, 10), ("f1@beta.json", .failed, 30 * 60),
        ] {
            try spool.deliverNewFile(Array(#"{"id":"x","kind":"sleep"}"#.utf8), named: FileName(name), into: state)
            try spool.directory(state).setModified(FileName(name), to: .now() - .seconds(age))
        }
        return (directory, binary, config)
    }

    /// `state/KEY@SUB` of each row, sorted: list gives directory order.
    static func items(_ result: CourierBinary.Result) -> [String] {
        result.output.split(separator: "\n").map { line in
            let cells = line.split(separator: "\t")
            return "\(cells[0])/\(cells[1])@\(cells[2])"
        }.sorted()
    }

    @Test("list without a state shows every state but sent/; --subscriber and --older-than narrow it")
    func listFilters() throws {
        let (directory, binary, config) = try Self.setUp()
        defer { withExtendedLifetime(directory) {} }
        func items(_ arguments: [String]) throws -> [String] {
            let result = try binary.run(["--config", config, "list"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.error)")
            return Self.items(result)
        }
        #expect(
            try items([]) == [
                "failed/f1@beta", "needsAttention/n1@alpha", "queued/q1@alpha", "queued/q2@alpha", "queued/q3@beta",
            ])
        #expect(try items(["sent"]) == ["sent/s1@alpha"])
        #expect(
            try items(["--subscriber", "alpha"]) == ["needsAttention/n1@alpha", "queued/q1@alpha", "queued/q2@alpha"])
        #expect(try items(["--older-than", "1h"]) == ["needsAttention/n1@alpha", "queued/q2@alpha"])
        #expect(try items(["queued", "--older-than=5m", "--subscriber", "beta"]) == ["queued/q3@beta"])
        let json = try binary.run(["--config", config, "list", "queued", "--json"])
        // JSON Lines: one object per item, the fields every command uses for an item.
        let array = try json.output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(
            array.compactMap { $0["entry"] as? String }.sorted() == ["q1@alpha.json", "q2@alpha.json", "q3@beta.json"])
        #expect(
            array.allSatisfy { $0["state"] as? String == "queued" && $0["key"] is String && $0["subscriber"] is String }
        )
        #expect(array.allSatisfy { ($0["ageSeconds"] as? Int ?? 0) >= 60 })
    }

    @Test("list with a duration it cannot read, or a subscriber that is nowhere, is a usage error")
    func listUsageErrors() throws {
        let (directory, binary, config) = try Self.setUp()
        defer { withExtendedLifetime(directory) {} }
        let bare = try binary.run(["--config", config, "list", "--older-than", "5"])
        #expect(bare.status == 64)
        #expect(bare.error.contains("--older-than 5: not a duration"), "\(bare.error)")
        let typo = try binary.run(["--config", config, "list", "--subscriber", "alhpa"])
        #expect(typo.status == 64)
        #expect(typo.error.contains("--subscriber alhpa: no such subscriber in the configuration"), "\(typo.error)")
        #expect(typo.error.contains("(configured: alpha, beta)"), "\(typo.error)")
        // A configured subscriber with nothing waiting is simply empty.
        let spool = directory.path + "/spool"
        #expect(rename(spool + "/failed/f1@beta.json", spool + "/sent/f1@beta.json") == 0)
        #expect(rename(spool + "/queued/q3@beta.json", spool + "/sent/q3@beta.json") == 0)
        let empty = try binary.run(["--config", config, "list", "--subscriber", "beta"])
        #expect(empty.status == 0 && empty.output.isEmpty, "\(empty.error)")
    }
}

extension QueueCommandTests {
    @Test("status --ages counts each subscriber's items per state by age; --json --ages gives the same as an object")
    func statusAges() throws {
        let (directory, binary, config) = try Self.setUp()
        defer { withExtendedLifetime(directory) {} }
        let text = try binary.run(["--config", config, "status", "--ages"])
        #expect(text.status == 0, "\(text.error)")
        let table = try #require(text.output.components(separatedBy: "ages, from each file's mtime").last)
        // In a pipe: tab-separated, no header; SUBSCRIBER STATE TOTAL <5m <1h <1d older.
        #expect(
            table.split(separator: "\n").dropFirst().map(String.init) == [
                "alpha\tneedsAttention\t1\t0\t0\t0\t1", "alpha\tqueued\t2\t1\t0\t1\t0", "beta\tqueued\t1\t0\t1\t0\t0",
                "beta\tfailed\t1\t0\t1\t0\t0",
            ], "\(text.output)")
        #expect(!(try binary.run(["--config", config, "status"]).output.contains("ages, from")))
        let json = try binary.run(["--config", config, "status", "--json", "--ages"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let ages = try #require(object["ages"] as? [String: [String: [String: Int]]], "\(json.output)")
        #expect(ages["alpha"]?["queued"] == ["total": 2, "under5m": 1, "under1h": 0, "under1d": 1, "older": 0])
        #expect(ages["beta"]?["failed"] == ["total": 1, "under5m": 0, "under1h": 1, "under1d": 0, "older": 0])
        #expect(ages["alpha"]?["sent"] == nil)
        #expect((object["counts"] as? [String: Int])?["queued"] == 3)
        let plain = try binary.run(["--config", config, "status", "--json"])
        #expect(!plain.output.contains("\"ages\""))
    }
}
