import CCurl
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierTransport

/// docs/design.md §8, "Batch size" and "Retries": the size a timeout
/// leaves is kept across rounds and grows back step by step; batch retries
/// back off exponentially with jitter. On the scripted transport and the
/// fake clock: no sockets, no sleeps.
@Suite struct AdaptiveBatchTests {
    static func subscriber(size: Int, concurrency: Int = 1) throws -> Subscriber {
        var subscriber = try TemporarySpool.subscriber("batchy", url: "http://127.0.0.1:9/", concurrency: concurrency)
        subscriber.mode = .batch
        subscriber.batch = BatchSettings(size: size)
        return subscriber
    }

    static func keys(_ request: DeliveryRequest) -> [String] {
        BatchTests.keys(of: HTTPRequest(method: "POST", target: "/", headers: [], body: request.body))
    }

    /// Every item OK, unless `fail` says the request gets this answer instead.
    static func transport(
        clock: FakeClock = FakeClock(), fail: @escaping (DeliveryRequest, Int) -> DeliveryResponse? = { _, _ in nil }
    ) -> ScriptedTransport {
        ScriptedTransport(clock: clock) { request, count in
            if let failure = fail(request, count) { return failure }
            let results = keys(request).map { #"{"idempotency_key":"\#($0)","status":"OK"}"# }
            return ScriptedTransport.response(200, #"{"results":[\#(results.joined(separator: ","))]}"#)
        }
    }

    static func sizes(_ transport: ScriptedTransport) -> [Int] { transport.started.map { keys($0).count } }

    static let timeout = ScriptedTransport.response(0, error: CurlError(CURLE_OPERATION_TIMEDOUT))

    static func state(_ spool: TemporarySpool) throws -> [String: Int] {
        let bytes = try #require(try spool.spool.controlFile("batch-batchy.json"))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Int])
    }

    @Test("the size a timeout left is where the next round starts")
    func theSizeIsKeptAcrossRounds() throws {
        let spool = try TemporarySpool(subscribers: [Self.subscriber(size: 8)])
        try DeliveryStageTests.queue(spool, (0..<8).map { "a\($0)" }, subscriber: "batchy")
        let first = Self.transport { request, _ in Self.keys(request).count == 8 ? Self.timeout : nil }
        let summary = try DeliveryStageTests.pass(spool, mode: .foreground, transport: first).run()
        #expect(Self.sizes(first) == [8, 4, 4])
        #expect(summary.batches["batchy"]?.finalSize == 4)
        #expect(try Self.state(spool) == ["size": 4, "answered": 2, "configured": 8])

        try DeliveryStageTests.queue(spool, (0..<8).map { "b\($0)" }, subscriber: "batchy")
        let second = Self.transport()
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: second).run()
        #expect(Self.sizes(second) == [4, 4], "the second round starts at 4, not at batch-size")
        #expect(try spool.names(in: .sent).count == 16)
    }

    @Test("after four batches answered in a row the size grows by a quarter, up to batch-size")
    func theSizeGrowsBackStepByStep() throws {
        let spool = try TemporarySpool(subscribers: [Self.subscriber(size: 8)])
        try spool.spool.writeControlFile("batch-batchy.json", Array(#"{"size":4,"answered":0,"configured":8}"#.utf8))
        try DeliveryStageTests.queue(spool, (0..<80).map { "g\($0)" }, subscriber: "batchy")
        let transport = Self.transport()
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(Self.sizes(transport) == [4, 4, 4, 4, 5, 5, 5, 5, 7, 7, 7, 7, 8, 8])
        #expect(summary.batches["batchy"]?.finalSize == 8)
        #expect(try Self.state(spool) == ["size": 8, "answered": 0, "configured": 8])
    }

    @Test("a batch that fails starts the count of answered batches over")
    func aFailureStartsTheStreakOver() throws {
        let spool = try TemporarySpool(subscribers: [Self.subscriber(size: 8)])
        try spool.spool.writeControlFile("batch-batchy.json", Array(#"{"size":2,"answered":3,"configured":8}"#.utf8))
        try DeliveryStageTests.queue(spool, (0..<20).map { "f\($0)" }, subscriber: "batchy")
        var requests = 0
        let transport = Self.transport { _, _ in
            requests += 1
            return requests == 1 ? ScriptedTransport.response(503) : nil
        }
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        // 3 answered before the round; the 503 sets that back to 0, so the
        // size grows only after four more.
        #expect(Self.sizes(transport) == [2, 2, 2, 2, 2, 3, 3, 3, 1])
        #expect(try spool.names(in: .needsAttention).count == 2)
    }

    @Test(
        "a changed batch-size starts over from the new value",
        arguments: [(configured: 16, expected: 16), (configured: 2, expected: 2)])
    func aChangedBatchSizeStartsOver(configured: Int, expected: Int) throws {
        let spool = try TemporarySpool(subscribers: [Self.subscriber(size: configured)])
        try spool.spool.writeControlFile("batch-batchy.json", Array(#"{"size":4,"answered":1,"configured":8}"#.utf8))
        try DeliveryStageTests.queue(spool, (0..<expected).map { "c\($0)" }, subscriber: "batchy")
        let transport = Self.transport()
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(Self.sizes(transport) == [expected])
    }

    @Test("a state file that cannot be read means batch-size, not a failed round")
    func aBrokenStateFileIsIgnored() throws {
        let spool = try TemporarySpool(subscribers: [Self.subscriber(size: 3)])
        try spool.spool.writeControlFile("batch-batchy.json", Array("{not json".utf8))
        try DeliveryStageTests.queue(spool, ["x0", "x1", "x2"], subscriber: "batchy")
        let transport = Self.transport()
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(Self.sizes(transport) == [3])
    }

    /// The waits between the attempts of one batch, on the fake clock.
    static func retryWaits(
        backoff: [Duration], jitter: Double, failures: Int, retryAfter: String? = nil
    ) throws -> [Duration] {
        let spool = try TemporarySpool(subscribers: [Self.subscriber(size: 4)])
        spool.configuration.backoff = backoff
        try DeliveryStageTests.queue(spool, ["r0", "r1"], subscriber: "batchy")
        let clock = FakeClock()
        var attempts: [MonotonicInstant] = []
        let transport = Self.transport(clock: clock) { _, count in
            attempts.append(clock.now)
            guard count <= failures else { return nil }
            return DeliveryResponse(
                status: 503, error: nil, retryAfter: retryAfter, answer: [], duration: .milliseconds(1))
        }
        let round = RoundID.make(at: .now())
        let summary = try DeliveryPass(
            session: spool.session, settings: RoundSettings(spool.configuration), round: round, mode: .foreground,
            summary: RoundSummary(round: round, mode: .foreground, started: .now()),
            schedules: RetrySchedules(spool.configuration).kept(on: spool.spool, log: .silent),
            transport: { _ throws(CurlError) in transport }, clock: { clock.now }, jitter: { jitter }
        ).run()
        #expect(summary.sent == 2)
        // Each collect moves the clock by a millisecond besides the wait.
        return zip(attempts, attempts.dropFirst()).map { $1 - $0 - .milliseconds(1) }
    }

    @Test("batch retries back off exponentially from the first backoff step, with equal jitter")
    func batchRetriesBackOffWithJitter() throws {
        let steps = [Duration.seconds(10), .seconds(10), .seconds(10), .seconds(10)]
        #expect(
            try Self.retryWaits(backoff: steps, jitter: 1, failures: 4) == [
                .seconds(10), .seconds(20), .seconds(40), .seconds(80),
            ])
        #expect(
            try Self.retryWaits(backoff: steps, jitter: 0, failures: 4) == [
                .seconds(5), .seconds(10), .seconds(20), .seconds(40),
            ])
        #expect(try Self.retryWaits(backoff: steps, jitter: 0.5, failures: 1) == [.milliseconds(7500)])
    }

    @Test("no batch retry waits longer than five minutes, and a longer Retry-After still wins over the jitter")
    func batchRetriesAreCapped() throws {
        let steps = [Duration.seconds(100), .seconds(1), .seconds(1)]
        #expect(
            try Self.retryWaits(backoff: steps, jitter: 1, failures: 3) == [
                .seconds(100), .seconds(200), .seconds(300),
            ])
        #expect(
            try Self.retryWaits(backoff: [.seconds(2)], jitter: 1, failures: 1, retryAfter: "120") == [.seconds(120)])
        #expect(BatchBackoff.delay(attempt: 10, base: .seconds(3600), jitter: 1) == .seconds(300))
        #expect(BatchBackoff.delay(attempt: 64, base: .seconds(1), jitter: 0) == .seconds(150))
    }
}
