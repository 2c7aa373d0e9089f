import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierSpool

/// Commands open the spool one way (issue 19): on a shared spool every
/// command that writes is its worker, every line passes the redactor, and
/// what a command says names every place an item is.
@Suite(.serialized, .tags(.integration)) struct SessionCommandTests {
    static let token = "tok-9f8e7d6c5b4a39281706"

    /// A shared spool's configuration (worker `host-a`) with subscriber
    /// alpha, whose token is `token`.
    static func sharedSetUp() throws -> (TemporaryDirectory, CourierBinary, String) {
        let directory = TemporaryDirectory("session")
        try directory.write(Self.token + "\n", to: "alpha.token")
        chmod(directory.path + "/alpha.token", 0o600)
        try directory.write(
            """
            [courier]
            spool = spool
            device-id = host-a
            shared = yes
            settle = 0s
            [subscriber alpha]
            url = http://127.0.0.1:9/
            token-file = \(directory.path)/alpha.token
            """, to: "courier.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/courier.conf"
        let initialised = try binary.run(["--config", config, "init"])
        #expect(initialised.status == 0, "\(initialised.error)")
        return (directory, binary, config)
    }

    static func ledgerFiles(_ directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/ledger").sorted()
    }

    @Test("on a shared spool hold, enqueue, copy and backfill write the worker's own ledger file")
    func sharedCommandsWriteTheWorkersLedger() throws {
        let (directory, binary, config) = try Self.sharedSetUp()
        let day = Timestamp.now().utcDay
        let held = try binary.run(["--config", config, "hold", "alpha", "--reason", "maintenance"])
        #expect(held.status == 0, "\(held.error)")
        let record = #"{"id":"e-1","kind":"sleep"}"#
        let enqueued = try binary.run(["--config", config, "enqueue", "-"], input: record)
        #expect(enqueued.status == 0, "\(enqueued.error)")
        try directory.write(record, to: "spool/sent/e-1@alpha.json")
        let copied = try binary.run(["--config", config, "copy", "e-1@alpha"])
        #expect(copied.status == 0, "\(copied.error)")
        let backfilled = try binary.run([
            "--config", config, "backfill", "--since", "1970-01-01", "--until", "2200-01-01", "--subscriber", "alpha",
        ])
        #expect(backfilled.status == 0, "\(backfilled.error)")
        #expect(try Self.ledgerFiles(directory) == ["\(day).host-a.tsv"])
    }

    @Test("a hold's reason that holds a subscriber's token is redacted in the ledger, the hold file and status")
    func holdReasonsAreRedacted() throws {
        let (directory, binary, config) = try Self.sharedSetUp()
        let held = try binary.run(["--config", config, "hold", "alpha", "--reason", "rotating \(Self.token) today"])
        #expect(held.status == 0, "\(held.error)")
        #expect(!held.output.contains(Self.token), "\(held.output)")
        for file in try Self.ledgerFiles(directory) {
            let text = try String(contentsOfFile: directory.path + "/spool/ledger/" + file, encoding: .utf8)
            #expect(!text.contains(Self.token), "\(file): \(text)")
            #expect(text.contains("rotating [redacted] today"), "\(text)")
        }
        let holdFile = try String(contentsOfFile: directory.path + "/spool/.courier/held/alpha", encoding: .utf8)
        #expect(!holdFile.contains(Self.token), "\(holdFile)")
        let status = try binary.run(["--config", config, "status"])
        #expect(!status.output.contains(Self.token), "\(status.output)")
    }

    @Test("resend of an entry in needsAttention/ and in queued/ names both places and moves neither")
    func resendNamesEveryPlace() throws {
        let (directory, binary, config) = try Self.sharedSetUp()
        let record = #"{"id":"k1","kind":"sleep"}"#
        try directory.write(record, to: "spool/needsAttention/k1@alpha.json")
        try directory.write(record, to: "spool/queued/k1@alpha.json")
        let result = try binary.run(["--config", config, "resend", "k1@alpha"])
        #expect(result.status == 65, "\(result.output)\(result.error)")
        #expect(result.error.contains("needsAttention/k1@alpha.json"), "\(result.error)")
        #expect(result.error.contains("queued/k1@alpha.json"), "\(result.error)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/spool/needsAttention/k1@alpha.json"))
        #expect(FileManager.default.fileExists(atPath: directory.path + "/spool/queued/k1@alpha.json"))
    }

    @Test("a deferred entry's age counts from its intake, not from its next attempt")
    func aDeferredEntryKeepsItsAge() throws {
        let (directory, binary, config) = try Self.sharedSetUp()
        try directory.write(#"{"id":"d1","kind":"sleep"}"#, to: "spool/queued/d1@alpha.json")
        let spool = try Spool(path: directory.path + "/spool")
        let stamp = DeferralStamp(due: .now() + .seconds(3600), deferrals: 1)
        try spool.directory(.queued).setModified(FileName("d1@alpha.json"), to: stamp.modified)

        let json = try binary.run(["--config", config, "list", "queued", "--json"])
        #expect(json.status == 0, "\(json.error)")
        let row = try #require(
            try JSONSerialization.jsonObject(with: Data((json.output.split(separator: "\n").first ?? "").utf8))
                as? [String: Any])
        let age = try #require(row["ageSeconds"] as? Int)
        #expect(age >= 0 && age < 600, "ageSeconds \(age)")
        let old = try binary.run(["--config", config, "list", "--older-than", "1h"])
        #expect(old.output.isEmpty, "a fresh entry is not an hour old: \(old.output)")
    }
}
