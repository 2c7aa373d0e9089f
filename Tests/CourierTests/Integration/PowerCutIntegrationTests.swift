import Foundation
import Testing

@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// Issue 20's in-process power cut (`FaultPlan(powerCutAtSync:)`): at each
/// sync of a round, everything not yet durable is undone, as after a power
/// cut; courier's next rounds must then deliver everything, with the
/// ledger ahead of the folders all along. The loop-device sweep
/// (scripts/powerloss-test.sh) proves the same on real file systems, in
/// minutes; this replays the model in milliseconds.
@Suite(.tags(.integration)) struct PowerCutTests {
    static let ids = (0..<4).map { "p-\($0)" }

    /// alpha takes everything; beta answers 503 and defers (`retry-schedule`).
    static func spool(_ alpha: LoopbackServer, _ beta: LoopbackServer) throws -> TemporarySpool {
        var deferring = try TemporarySpool.subscriber("beta", url: beta.url)
        deferring.retrySchedule = [.seconds(3600)]
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: alpha.url), deferring])
        for id in ids { try spool.dropRecord(id: id) }
        return spool
    }

    /// Ledger first: an entry in sent/ has its `sent` line, a deferred one
    /// in queued/ its `deferred` line.
    static func expectLedgerFirst(_ spool: TemporarySpool, _ label: String) throws {
        let lines = try spool.ledger()
        for name in try spool.names(in: .sent) {
            let entry = try #require(EntryName(name))
            #expect(
                lines.contains { $0.event == .sent && $0.key == entry.key.description && $0.subscriber == "alpha" },
                "\(label): sent/\(name) without its sent line")
        }
        for name in try spool.names(in: .queued) {
            let status = try #require(try spool.spool.directory(.queued).status(of: FileName(name)))
            guard DeferralStamp(modified: status.modified) != nil, let entry = EntryName(name) else { continue }
            #expect(
                lines.contains { $0.event == .deferred && $0.key == entry.key.description },
                "\(label): a deferred queued/\(name) without its deferred line")
        }
    }

    @Test("a power cut at any sync of a round leaves a spool whose next rounds deliver every record, ledger first")
    func aRoundSurvivesAPowerCutAtEverySync() throws {
        let alpha = try LoopbackServer(status: 201)
        let beta = try LoopbackServer(status: 503)
        let sweep = try FaultSweep {
            let counting = try Self.spool(alpha, beta)
            let counter = FaultPlan()
            counting.session.faults = counter
            try counting.runRound()
            return counter.counts
        }
        #expect((sweep.least[.sync] ?? 0) >= 6, "\(sweep.least)")
        for sync in sweep.occurrences(of: .sync) {
            let label = "power cut at sync #\(sync)"
            guard
                let (spool, _, outcome) = try sweep.reach(
                    label, .sync, sync,
                    {
                        let spool = try Self.spool(alpha, beta)
                        let cut = FaultPlan(powerCutAtSync: sync)
                        spool.session.faults = cut
                        return (spool, cut, Result { try spool.runRound() })
                    }, reached: { $0.1.powerCut?.happened == true })
            else { continue }
            #expect(throws: (any Error).self, "\(label)") { try outcome.get() }
            #expect(try spool.placements().values.allSatisfy { $0.count == 1 }, "\(label): right after the cut")
            try Self.expectLedgerFirst(spool, label + ", right after the cut")
            // The machine comes back: a new session, courier's own rounds.
            let rebooted = try SpoolSession(path: spool.path, worker: nil)
            for _ in 0..<2 {
                _ = try Round(session: rebooted, configuration: spool.configuration, mode: .background).run(wait: true)
            }
            #expect(try spool.names(in: .sent) == Self.ids.map { "\($0)@alpha.json" }, "\(label)")
            #expect(try spool.names(in: .queued) == Self.ids.map { "\($0)@beta.json" }, "\(label): beta's deferred")
            #expect(try spool.names(in: .needsAttention).isEmpty && spool.names(in: .sending).isEmpty, "\(label)")
            #expect(try spool.ledger().filter { $0.event == .invalid }.isEmpty, "\(label)")
            #expect(try spool.placements().values.allSatisfy { $0.count == 1 }, "\(label)")
            try Self.expectLedgerFirst(spool, label)
        }
    }
}
