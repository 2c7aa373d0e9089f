import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// Whole rounds under attack: what one pass of a round decided holds for
/// the round's second pass too.
@Suite(.tags(.integration)) struct RoundAttackTests {
    @Test("a subscriber the breaker stopped in the first pass gets no requests from the second pass a route starts")
    func theBreakerHoldsForTheWholeRound() throws {
        let beta = try LoopbackServer(status: 201)
        // Nothing listens on the discard port: every request is refused, no answer.
        let alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", kinds: ["sleep"], concurrency: 1)
        let spool = try TemporarySpool(subscribers: [
            alpha, try TemporarySpool.subscriber("beta", url: beta.url, kinds: ["workout"]),
        ])
        for index in 0..<20 { try spool.dropRecord(id: "a\(index)") }
        try spool.drop(#"{"id":"w-1","kind":"workout","awaitRoute":true,"data":{}}"#, as: "w.json")
        try spool.drop(#"{"id":"r-1","kind":"route","for":"w-1"}"#, as: "r.json")

        let summary = try spool.runRound()
        #expect(summary.routesAttached == 1)
        #expect(beta.countsByKey["w-1"] == 1)
        let tried = try spool.names(in: .needsAttention).filter { $0.hasSuffix("@alpha.json") }
        #expect(tried.count == 5, "alpha was tried again after the breaker stopped it: \(tried)")
        #expect(summary.notAnswering == ["alpha": 15], "the round's summary lost the stopped subscriber")
        #expect(try spool.names(in: .queued).count == 15)
    }

    @Test("entries put back in queued/ when the breaker stops are counted once, however the directory returns them")
    func putBackEntriesAreCountedOnce() throws {
        let alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: 1)
        let spool = try TemporarySpool(subscribers: [alpha])
        for index in 0..<1500 { try spool.dropRecord(id: "a\(index)") }

        let summary = try spool.runRound()
        let left = try spool.names(in: .queued).count
        #expect(left == 1495)
        #expect(summary.notAnswering == ["alpha": left])
    }
}
