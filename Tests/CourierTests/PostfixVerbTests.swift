import CourierIdentifiers
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// Postfix's verbs (issue 22): `delete` on `queued/` as postsuper -d,
/// `send-now NAME…` as postqueue -i, and what a pick of everything passes
/// over.
@Suite struct PostfixVerbTests {
    @Test("delete takes queued/ entries by name or with --state queued, but --all alone never empties the queue")
    func deleteReachesQueuedOnlyWhenAsked() throws {
        let spool = try BulkMoveTests.spool([
            (.queued, "q-1@alpha.json", 60), (.queued, "q-2@beta.json", 60), (.failed, "f-1@alpha.json", 60),
        ])
        var all = ItemSelection()
        all.all = true
        let everything = try all.choose(
            in: spool.spool, allowed: ManualMoves.deleteStates, picking: ManualMoves.deletePickStates)
        #expect(everything.items.map(\.name.description) == ["f-1@alpha.json"])

        var queued = ItemSelection()
        queued.states = [.queued]
        queued.subscriber = SubscriberName("alpha")
        let alphas = try queued.choose(
            in: spool.spool, allowed: ManualMoves.deleteStates, picking: ManualMoves.deletePickStates)
        #expect(alphas.items.map(\.name.description) == ["q-1@alpha.json"])

        var named = ItemSelection()
        named.names = ["q-2@beta"]
        let report = try ManualMoves(session: spool.session).delete(
            try named.resolve(in: spool.spool, allowed: ManualMoves.deleteStates).items)
        #expect(report.moved.count == 1 && report.refused.isEmpty)
        #expect(try spool.names(in: .queued) == ["q-1@alpha.json"])
        let line = try #require(try spool.ledger().last)
        #expect(line.event == .deleted && line.key == "q-2" && line.detail.contains("queued/ → removed"))
    }

    @Test("a pick of everything passes over flagged files and says which; a pick for one subscriber does not")
    func flaggedFilesAreSkippedAndSaid() throws {
        let spool = try BulkMoveTests.spool([
            (.needsAttention, "invalid-20261130T070000Z-a.json", 60), (.failed, "invalid-20261130T070000Z-b.json", 60),
            (.needsAttention, "k-1@alpha.json", 60),
        ])
        var all = ItemSelection()
        all.all = true
        let resolved = try all.choose(in: spool.spool, allowed: ManualMoves.resendStates)
        #expect(resolved.items.map(\.name.description) == ["k-1@alpha.json"])
        #expect(
            Set(resolved.skipped.map(\.name.description))
                == ["invalid-20261130T070000Z-a.json", "invalid-20261130T070000Z-b.json"])
        var alpha = ItemSelection()
        alpha.subscriber = SubscriberName("alpha")
        #expect(try alpha.choose(in: spool.spool, allowed: ManualMoves.resendStates).skipped.isEmpty)
    }
}
