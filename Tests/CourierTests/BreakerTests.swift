import CCurl
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierTransport

/// The circuit breaker inside a round (issue 12, item 4), through the
/// scripted transport.
@Suite struct BreakerTests {
    static let timeout = CurlError(CURLE_OPERATION_TIMEDOUT, detail: "Operation timed out after 1000 ms")

    static func spool(concurrency: Int = 2, breaker: BreakerLimit? = nil) throws -> TemporarySpool {
        var alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: concurrency)
        alpha.breaker = breaker
        let beta = try TemporarySpool.subscriber("beta", url: "http://127.0.0.1:9/")
        return try TemporarySpool(subscribers: [alpha, beta])
    }

    /// alpha never answers; beta answers 201.
    static func deadAlpha(_ request: DeliveryRequest, _ count: Int) -> DeliveryResponse {
        request.subscriber.name.value == "beta"
            ? ScriptedTransport.response(201) : ScriptedTransport.response(0, error: timeout)
    }

    @Test("after 5 requests in a row get no answer the round starts no more to that subscriber; the rest stay queued")
    func theBreakerStopsASilentSubscriber() throws {
        let spool = try Self.spool()
        try DeliveryStageTests.queue(spool, (0..<100).map { "a\($0)" }, subscriber: "alpha")
        try DeliveryStageTests.queue(spool, (0..<10).map { "b\($0)" }, subscriber: "beta")
        let transport = ScriptedTransport(clock: FakeClock(), answer: Self.deadAlpha)
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()

        let tried = transport.started.filter { $0.key.hasPrefix("a") }.count
        // Two in flight at a time: the fifth opens the breaker, the sixth was already on its way.
        #expect(tried == 6)
        #expect(try spool.names(in: .needsAttention).count == 6)
        #expect(try spool.names(in: .queued).count == 94)
        #expect(summary.notAnswering == ["alpha": 94])
        #expect(try spool.names(in: .sent).count == 10, "beta is not affected")
        #expect(try spool.names(in: .sending).isEmpty)
    }

    @Test("any answer, even a 503, starts the count again")
    func anAnswerResetsTheCount() throws {
        let spool = try Self.spool(concurrency: 1)
        try DeliveryStageTests.queue(spool, (0..<20).map { "a\($0)" }, subscriber: "alpha")
        let counter = Counter()
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in
            // Four silences, then an answer, and again.
            let index = counter.next()
            return index % 5 == 4 ? ScriptedTransport.response(503) : ScriptedTransport.response(0, error: Self.timeout)
        }
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(transport.started.count == 20)
        #expect(summary.notAnswering == [:])
    }

    @Test("breaker = off never stops")
    func aBreakerSwitchedOff() throws {
        let spool = try Self.spool(breaker: .off)
        try DeliveryStageTests.queue(spool, (0..<30).map { "a\($0)" }, subscriber: "alpha")
        let transport = ScriptedTransport(clock: FakeClock(), answer: Self.deadAlpha)
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(transport.started.count == 30)
    }

    @Test("in a foreground round the breaker also ends the retries waiting in sending/, in the ledger's words")
    func theBreakerEndsWaitingRetries() throws {
        let spool = try Self.spool(concurrency: 8)
        try DeliveryStageTests.queue(spool, (0..<20).map { "a\($0)" }, subscriber: "alpha")
        // One answer per collect: each of the first four silences frees a
        // slot for a new entry and leaves a retry waiting out its backoff
        // when the fifth opens the breaker.
        let transport = ScriptedTransport(clock: FakeClock(), perCollect: 1, answer: Self.deadAlpha)
        let summary = try DeliveryStageTests.pass(spool, mode: .foreground, transport: transport).run()

        #expect(transport.started.count == 12, "8, then 4 in the slots the first silences freed; no retry")
        #expect(try spool.names(in: .needsAttention).count == 12)
        #expect(try spool.names(in: .queued).count == 8)
        #expect(try spool.names(in: .sending).isEmpty)
        #expect(summary.notAnswering == ["alpha": 8])
        let final = try spool.ledger().filter { $0.event == .needsAttention }
        #expect(final.count == 12)
        #expect(
            final.allSatisfy {
                $0.detail.hasPrefix("retries stopped by the breaker (timeout): Operation timed out after 1000 ms")
            })
    }

    @Test("with retry-schedule, what the breaker stopped waits in queued/: tried entries deferred, untried ones due")
    func theBreakerWithASchedule() throws {
        var alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: 2)
        alpha.retrySchedule = [.seconds(60)]
        let spool = try TemporarySpool(subscribers: [alpha])
        try DeliveryStageTests.queue(spool, (0..<20).map { "a\($0)" }, subscriber: "alpha")
        let transport = ScriptedTransport(clock: FakeClock(), answer: Self.deadAlpha)
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(try spool.names(in: .queued).count == 20)
        #expect(summary.deferred == 6 && summary.notAnswering == ["alpha": 14])
    }
}

/// Counts the scripted transport's answers (it calls from one thread).
final class Counter {
    private var value = -1
    func next() -> Int {
        value += 1
        return value
    }
}
