import Foundation
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierSupport

/// The fault sweep over every commit path that is not a round (issue 19):
/// a person's moves, holds, copies, backfills, prune and a catalog
/// page. Each rename, write, fsync and removal of the operation fails in
/// turn; the operation must say so, and once the fault has passed, doing it
/// again must end exactly where it ends without a fault, with nothing left
/// in `tmp/`.
@Suite(.tags(.integration)) struct CommitPathFaultTests {
    /// One commit path: a spool to start from, the operation, and what of
    /// the spool the outcome is judged by.
    struct Path: Sendable {
        let name: String
        let setUp: @Sendable () throws -> TemporarySpool
        let act: @Sendable (TemporarySpool) throws -> Void
    }

    static let record = #"{"id":"K","kind":"sleep"}"#

    static func spool() throws -> TemporarySpool {
        try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
    }

    /// `count` entries `p-N@alpha.json` in `state`.
    static func spool(with count: Int, in state: SpoolState) throws -> TemporarySpool {
        let spool = try spool()
        for index in 0..<count {
            try spool.spool.deliverNewFile(
                Array(record.replacingOccurrences(of: "K", with: "p-\(index)").utf8),
                named: FileName("p-\(index)@alpha.json"), into: state)
        }
        return spool
    }

    static func items(_ spool: TemporarySpool, in state: SpoolState) throws -> [SpoolItem] {
        try spool.names(in: state).map { SpoolItem(name: FileName($0), state: state, entry: EntryName($0)) }
    }

    static func catalog() throws -> Catalog {
        Catalog(name: try TemporarySpool.subscriberName("things"), url: "http://127.0.0.1:9/")
    }

    static func page() throws -> CatalogPage {
        let catalog = try catalog()
        let upserts = (0..<4).map { #"{"id":"u\#($0)","n":\#($0)}"# }.joined(separator: ",")
        return try CatalogPage.parse(
            Array(#"{"upserts":[\#(upserts)],"tombstones":["old"],"nextCursor":null,"version":9}"#.utf8),
            catalog: catalog, cursor: .version, url: "test", page: 1)
    }

    static let paths: [Path] = [
        Path(name: "ack", setUp: { try spool(with: 3, in: .needsAttention) }) { spool in
            let report = try ManualMoves(session: spool.session).acknowledge(try items(spool, in: .needsAttention))
            if report.moved.isEmpty && !report.refused.isEmpty { throw TestFailure("refused") }
        },
        Path(name: "resend", setUp: { try spool(with: 3, in: .failed) }) { spool in
            _ = try ManualMoves(session: spool.session).resend(try items(spool, in: .failed))
        },
        Path(name: "delete", setUp: { try spool(with: 3, in: .needsAttention) }) { spool in
            _ = try ManualMoves(session: spool.session).delete(try items(spool, in: .needsAttention))
        },
        Path(name: "hold then release", setUp: spool) { spool in
            let alpha = try TemporarySpool.subscriberName("alpha")
            let holding = Holding(session: spool.session)
            if try spool.spool.holds().isEmpty { try holding.hold(alpha, reason: "maintenance") }
            _ = try holding.release(alpha)
        },
        Path(name: "copy", setUp: { try spool(with: 1, in: .sent) }) { spool in
            // Once: a copy a fault left behind is a copy made.
            guard try spool.names(in: .queued).isEmpty else { return }
            let original = try #require(try items(spool, in: .sent).first)
            _ = try Copier(session: spool.session, configuration: spool.configuration).copy(original)
        },
        Path(name: "backfill from sent/", setUp: { try spool(with: 3, in: .sent) }) { spool in
            _ = try Backfill(session: spool.session, configuration: spool.configuration).run(
                since: Timestamp(secondsSinceEpoch: 0), until: .now() + .seconds(60),
                subscriber: try TemporarySpool.subscriberName("alpha"), from: .sent, dryRun: false)
        },
        Path(name: "prune", setUp: { try spool(with: 3, in: .sent) }) { spool in
            _ = try Pruner(session: spool.session, retention: .seconds(1), now: .now() + .seconds(3600), dryRun: false)
                .run()
        },
        Path(
            name: "a catalog page",
            setUp: {
                let made = try CommitPathFaultTests.spool()
                let folder = try made.session.folder(.catalog(try catalog().name))
                try made.spool.deliverNewFile(Array("{}".utf8), named: FileName("old.json"), into: folder)
                return made
            }
        ) { spool in
            let catalog = try catalog()
            let store = try CatalogStore(session: spool.session, catalog: catalog, cursor: .version, log: .silent)
            var state = try CatalogState.load(catalog.name, in: spool.spool)
            var report = CatalogSyncReport(session: RoundID(value: "t"))
            // What a sync does: replay what a fault left, then the page.
            try store.replayJournal(state: &state)
            guard state.version == nil else { return }
            try store.writeJournal(try page())
            try store.applyAndAdvance(try page(), state: &state, report: &report)
        },
    ]

    /// What a path's outcome is judged by: every folder's names (state
    /// folders, `.courier/held/`, the catalog, the ledger's events) and
    /// `tmp/`, which must end empty.
    static func outcome(_ spool: TemporarySpool) throws -> [String: [String]] {
        var outcome: [String: [String]] = [:]
        // A name `enqueue` makes is unique per call, and a copy a fault
        // stopped after its line leaves that number used: only the
        // record's part of a name counts, and that it is a copy.
        func record(_ name: String) -> String {
            let copy = name.replacing(#/#[0-9]+/#, with: "#N")
            return StagingNames.writer(of: FileName(copy)) == nil
                ? copy : "…" + copy.drop { $0 != "." }.dropFirst().drop { $0 != "." }
        }
        for state in SpoolState.allCases { outcome[state.rawValue] = try spool.names(in: state).map(record) }
        outcome["held"] = try spool.spool.holds().map(\.subscriber.value)
        outcome["tmp"] = try spool.spool.tmp.sortedNames().map(\.description)
        if let folder = try? spool.spool.root.openDirectory(FileName("catalogs")).openDirectory(FileName("things")) {
            outcome["catalog"] = try folder.sortedNames().map(\.description)
        }
        outcome["events"] = try Set(spool.ledger().map { "\(record($0.key)) \($0.event.rawValue)" }).sorted()
        return outcome
    }

    /// A path run once with a plan that only counts: where it ends, and how
    /// many of each operation it made.
    static func withoutFault(_ path: Path) throws -> (outcome: [String: [String]], counts: [FaultPlan.Operation: Int]) {
        let counting = try path.setUp()
        let counter = FaultPlan()
        counting.session.faults = counter
        try path.act(counting)
        counting.session.faults = nil
        return (try outcome(counting), counter.counts)
    }

    @Test(
        "every failing rename, write, fsync and removal of a person's commands, prune and catalog pages is reported, and doing it again ends as without the fault"
    )
    func everyCommitPathSurvivesEachFault() throws {
        for path in Self.paths {
            let (expected, counts) = try Self.withoutFault(path)
            #expect(expected["tmp"] == [], "\(path.name): \(expected)")
            #expect((counts[.sync] ?? 0) >= 1, "\(path.name) syncs nothing through the seam: \(counts)")
            for operation in FaultPlan.Operation.allCases {
                for occurrence in stride(from: 1, through: counts[operation] ?? 0, by: 1) {
                    let label = "\(path.name): \(operation) #\(occurrence) fails"
                    let spool = try path.setUp()
                    spool.session.faults = FaultPlan(failing: operation, at: occurrence, with: Errno(EIO))
                    #expect(throws: (any Error).self, "\(label)") { try path.act(spool) }
                    spool.session.faults = nil
                    try path.act(spool)
                    #expect(try Self.outcome(spool) == expected, "\(label)")
                }
            }
        }
    }

    @Test(
        "a power cut at every sync of a person's commands, prune and catalog pages, then doing it again, ends as without the cut"
    )
    func everyCommitPathSurvivesAPowerCut() throws {
        for path in Self.paths {
            let (expected, counts) = try Self.withoutFault(path)
            for sync in stride(from: 1, through: counts[.sync] ?? 0, by: 1) {
                let label = "\(path.name): power cut at sync #\(sync)"
                let spool = try path.setUp()
                let cut = FaultPlan(powerCutAtSync: sync)
                spool.session.faults = cut
                #expect(throws: (any Error).self, "\(label)") { try path.act(spool) }
                #expect(cut.powerCut?.happened == true, "\(label): the cut never came")
                // After the cut: every item in one state, nothing half written.
                #expect(try spool.placements().values.allSatisfy { $0.count == 1 }, "\(label)")
                spool.session.faults = nil
                try path.act(spool)
                var outcome = try Self.outcome(spool)
                // A staged file the cut emptied is a dead writer's leftover
                // the next round or prune removes; this process never died.
                outcome["tmp"] = expected["tmp"]
                #expect(outcome == expected, "\(label)")
            }
        }
    }
}
