import CourierIdentifiers
import Testing

@testable import CourierPosix
@testable import CourierSpool

/// The ledger's round and status columns read as types: who wrote a line,
/// and whether a server answered, in the words the ledger always had.
@Suite struct LedgerActorTests {
    @Test(
        "each actor is written as today's word and read back as itself",
        arguments: [
            (LedgerActor.person, "manual"), (.prune, "prune"), (.backfill, "backfill"), (.unattributed, "-"),
            (.round(RoundID(value: "20261130T070000Z-ab12")), "20261130T070000Z-ab12"),
        ])
    func actorsKeepTheirWords(_ actor: LedgerActor, _ column: String) throws {
        #expect(actor.column == column)
        #expect(LedgerActor(column: column) == actor)
        let line = LedgerLine(
            time: Timestamp(secondsSinceEpoch: 0), actor: actor, subscriber: SubscriberName("a"), key: "k", event: .held
        )
        let read = try #require(LedgerLine(parsing: line.formatted.dropLast()))
        #expect(read.round == column && read.actor == actor)
    }

    @Test("a status of 0 is no answer; any other is the server's status")
    func statusZeroIsNoAnswer() {
        #expect(LedgerAnswer(column: 0) == .none && LedgerAnswer(column: 0).status == nil)
        #expect(LedgerAnswer(column: 503).status == 503 && LedgerAnswer.status(201).column == 201)
        let line = LedgerLine(
            time: Timestamp(secondsSinceEpoch: 0), round: "r", subscriber: "a", key: "k", event: .needsAttention)
        #expect(line.answer == .none && line.status == 0)
    }
}
