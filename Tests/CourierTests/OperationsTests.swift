import Foundation
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// copy, backfill and prune, on real spools.
@Suite struct OperationsTests {
    static func spool(names: [String] = ["alpha", "beta"]) throws -> (TemporarySpool, LoopbackServer) {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(
            subscribers: names.map { try TemporarySpool.subscriber($0, url: server.url, kinds: ["sleep"]) })
        spool.companions.append(server)
        return (spool, server)
    }

    // MARK: copy

    @Test func copiesAreNumberedAcrossStatesAndDays() throws {
        let (spool, server) = try Self.spool(names: ["alpha"])
        try spool.dropRecord(id: "s")
        try spool.runRound()
        let copier = Copier(session: spool.session, configuration: spool.configuration)
        let first = try copier.copy(try #require(try spool.spool.resolve("s@alpha").first))
        #expect(first.description == "s#2@alpha")
        try spool.runRound()
        // #3 was used once and pruned from the spool; only an old ledger day remembers it.
        try Ledger(directory: spool.spool.ledgerDirectory).append(
            LedgerLine(
                time: .now() - .seconds(40 * 86_400), round: "old", subscriber: "alpha", key: "s#3", event: .sent))
        let second = try copier.copy(try #require(try spool.spool.resolve("s#2@alpha").first))
        #expect(second.description == "s#4@alpha")
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["s#2@alpha.json", "s#4@alpha.json", "s@alpha.json"])
        #expect(server.requests.compactMap { $0.header("idempotency-key") } == ["s", "s#2", "s#4"])
        // The copies' bodies are the original's bytes.
        #expect(Set(server.requests.map(\.body)).count == 1)
        #expect(try spool.ledger().filter { $0.event == .copied }.map(\.key) == ["s#2", "s#4"])
    }

    @Test func aCopyCanGoToAnotherSubscriber() throws {
        let (spool, _) = try Self.spool()
        try spool.dropRecord(id: "s", extra: #","subscribers":["alpha"]"#)
        try spool.runRound()
        let item = try #require(try spool.spool.resolve("s@alpha").first)
        let copy = try Copier(session: spool.session, configuration: spool.configuration).copy(
            item, to: SubscriberName("beta"))
        #expect(copy.description == "s#2@beta")
        #expect(throws: OperationError.self) {
            try Copier(session: spool.session, configuration: spool.configuration).copy(
                item, to: SubscriberName("nobody"))
        }
    }

    // MARK: backfill

    static func record(_ id: String, _ time: String, only subscriber: String? = nil) -> String {
        let subscribers = subscriber.map { #","subscribers":["\#($0)"]"# } ?? ""
        return #"{"id":"\#(id)","kind":"sleep","time":"\#(time)"\#(subscribers)}"#
    }

    @Test func backfillFromSentTakesTheRangeOncePerID() throws {
        let (spool, server) = try Self.spool()
        try spool.drop(Self.record("n-01", "2026-11-01T08:00:00Z", only: "alpha"), as: "a")
        try spool.drop(Self.record("n-15", "2026-11-15T08:00:00Z", only: "alpha"), as: "b")
        try spool.drop(Self.record("n-29", "2026-11-29T23:59:00Z", only: "alpha"), as: "c")
        try spool.drop(Self.record("d-02", "2026-12-02T08:00:00Z", only: "alpha"), as: "d")
        try spool.runRound()
        _ = try Copier(session: spool.session, configuration: spool.configuration).copy(
            try #require(try spool.spool.resolve("n-15@alpha").first))
        try spool.runRound()
        #expect(server.requests.count == 5)

        let backfill = Backfill(session: spool.session, configuration: spool.configuration)
        let since = try #require(Timestamp(dateOrTime: "2026-11-10"))
        let until = try #require(Timestamp(dateOrTime: "2026-12-01"))
        let dry = try backfill.run(
            since: since, until: until, subscriber: SubscriberName("beta")!, from: .sent, dryRun: true)
        #expect(dry.queued == ["n-15@beta", "n-29@beta"])
        #expect(try spool.names(in: .queued).isEmpty)

        let report = try backfill.run(
            since: since, until: until, subscriber: SubscriberName("beta")!, from: .sent, dryRun: false)
        #expect(report.queued == ["n-15@beta", "n-29@beta"])
        try spool.runRound()
        let keys = server.requests.dropFirst(5).compactMap { $0.header("idempotency-key") }
        #expect(keys.sorted() == ["n-15", "n-29"], "stable keys, one per id, not the copy")
        #expect(try spool.ledger().filter { $0.event == .backfilled }.count == 2)
    }

    @Test func backfillToTheSameSubscriberResendsWithTheSameKey() throws {
        let (spool, server) = try Self.spool(names: ["alpha"])
        try spool.drop(Self.record("n-15", "2026-11-15T08:00:00Z"), as: "b")
        try spool.runRound()
        let report = try Backfill(session: spool.session, configuration: spool.configuration).run(
            since: Timestamp(dateOrTime: "2026-11-01")!, until: Timestamp(dateOrTime: "2026-12-01")!,
            subscriber: SubscriberName("alpha")!, from: .sent, dryRun: false)
        #expect(report.queued == ["n-15@alpha"])
        #expect(try spool.placements()["n-15@alpha.json"] == [.queued])
        try spool.runRound()
        #expect(server.countsByKey == ["n-15": 2])
    }

    @Test func backfillFromADirectoryOfRecords() throws {
        let (spool, server) = try Self.spool()
        let archive = TemporaryDirectory("archive")
        try archive.write(Self.record("old-1", "2026-10-01T08:00:00Z"), to: "1.json")
        try archive.write(Self.record("old-2", "2026-10-02T08:00:00Z"), to: "2.json")
        try archive.write(Self.record("new-1", "2026-11-20T08:00:00Z"), to: "3.json")
        try archive.write("not a record", to: "4.json")
        let report = try Backfill(session: spool.session, configuration: spool.configuration).run(
            since: Timestamp(dateOrTime: "2026-10-01")!, until: Timestamp(dateOrTime: "2026-10-03")!,
            subscriber: SubscriberName("alpha")!, from: .directory(archive.path), dryRun: false)
        #expect(report.queued == ["old-1@alpha", "old-2@alpha"])
        #expect(report.skipped.count == 1)
        try spool.runRound()
        #expect(server.requests.count == 2)
        #expect(try spool.names(in: .sent) == ["old-1@alpha.json", "old-2@alpha.json"])
    }

    // MARK: prune

    @Test func pruneRemovesWhatIsOldAndNeverWhatNeedsAPerson() throws {
        let (spool, _) = try Self.spool(names: ["alpha"])
        let now = Timestamp.now()
        let day: Int64 = 86_400
        let ledger = Ledger(directory: spool.spool.ledgerDirectory)
        for age in [200, 184, 100, 0] as [Int64] {
            try ledger.append(
                LedgerLine(
                    time: now - .seconds(age * day), round: "r", subscriber: "alpha", key: "k\(age)", event: .sent))
        }
        for (state, name, age) in [
            (SpoolState.sent, "old@alpha.json", 200), (.sent, "young@alpha.json", 10),
            (.failed, "ancient@alpha.json", 400),
            (.needsAttention, "ancient2@alpha.json", 400),
        ] as [(SpoolState, String, Int64)] {
            try spool.spool.deliverNewFile(Array("{}".utf8), named: FileName(name), into: state)
            try spool.spool.directory(state).setModified(FileName(name), to: now - .seconds(age * day))
        }
        for (name, hours) in [("leftover.1", 40), ("fresh.2", 2)] as [(String, Int64)] {
            try spool.spool.deliverNewFile(Array("x".utf8), named: FileName(name), into: spool.spool.tmp)
            try spool.spool.tmp.setModified(FileName(name), to: now - .seconds(hours * 3600))
        }
        let dry = try Pruner(session: spool.session, retention: .seconds(183 * day), now: now, dryRun: true).run()
        #expect(dry.total == 4)
        #expect(try spool.names(in: .sent).count == 2)

        let report = try Pruner(session: spool.session, retention: .seconds(183 * day), now: now, dryRun: false).run()
        #expect(
            report.ledgerFiles == [
                (now - .seconds(200 * day)).utcDay + ".tsv", (now - .seconds(184 * day)).utcDay + ".tsv",
            ])
        #expect(report.sentEntries == ["old@alpha.json"])
        #expect(report.temporaryLeftovers == ["leftover.1"])
        #expect(try spool.names(in: .sent) == ["young@alpha.json"])
        #expect(try spool.names(in: .failed) == ["ancient@alpha.json"])
        #expect(try spool.names(in: .needsAttention) == ["ancient2@alpha.json"])
        #expect(try spool.spool.tmp.sortedNames().map(\.description) == ["fresh.2"])
        // Twice is fine: nothing left to remove.
        #expect(
            try Pruner(session: spool.session, retention: .seconds(183 * day), now: now, dryRun: false).run().total == 0
        )
    }

    @Test("with failed-retention, prune removes failed/ entries by the time they entered failed/, with a ledger line")
    func failedRetentionRemovesOldFailures() throws {
        let (spool, _) = try Self.spool(names: ["alpha"])
        let day: Int64 = 86_400
        for (state, name) in [(SpoolState.failed, "f-1@alpha.json"), (.needsAttention, "n-1@alpha.json")] {
            try spool.spool.deliverNewFile(Array("{}".utf8), named: FileName(name), into: state)
            // An old record: its age in failed/ is what counts, not its own.
            try spool.spool.directory(state).setModified(FileName(name), to: .now() - .seconds(400 * day))
        }
        let keepAYear = Duration.seconds(365 * day)
        let today = try Pruner(
            session: spool.session, retention: keepAYear, failedRetention: .seconds(30 * day), dryRun: false
        ).run()
        #expect(today.failedEntries.isEmpty, "an entry that just entered failed/ stays")

        let later = Timestamp.now() + .seconds(31 * day)
        let dry = try Pruner(
            session: spool.session, retention: keepAYear, failedRetention: .seconds(30 * day), now: later, dryRun: true
        ).run()
        #expect(dry.failedEntries == ["f-1@alpha.json"])
        #expect(try spool.names(in: .failed) == ["f-1@alpha.json"])
        #expect(try spool.ledger().filter { $0.event == .deleted }.isEmpty)

        let report = try Pruner(
            session: spool.session, retention: keepAYear, failedRetention: .seconds(30 * day), now: later, dryRun: false
        ).run()
        #expect(report.failedEntries == ["f-1@alpha.json"])
        #expect(try spool.names(in: .failed).isEmpty)
        #expect(try spool.names(in: .needsAttention) == ["n-1@alpha.json"], "a person's items are never pruned")
        let deleted = try spool.ledger().filter { $0.event == .deleted }
        #expect(
            deleted.map(\.key) == ["f-1"] && deleted.first?.subscriber == "alpha" && deleted.first?.round == "prune")

        let unset = Pruner(
            session: spool.session, retention: keepAYear, now: later + .seconds(999 * day), dryRun: false)
        #expect(try unset.run().failedEntries.isEmpty)
    }
}
