import CCurl
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierTransport

/// The delivery stage driven through a scripted transport and a fake clock:
/// retries, batch halving and the group commit, without sockets or sleeps.
@Suite struct DeliveryStageTests {
    static func queue(_ spool: TemporarySpool, _ ids: [String], subscriber: String) throws {
        for id in ids {
            try spool.spool.deliverNewFile(
                Array(#"{"id":"\#(id)","kind":"sleep"}"#.utf8), named: FileName("\(id)@\(subscriber).json"),
                into: .queued)
        }
    }

    static func pass(_ spool: TemporarySpool, mode: RoundMode, transport: ScriptedTransport) throws -> DeliveryPass {
        let round = RoundID.make(at: .now())
        return try DeliveryPass(
            session: spool.session, settings: RoundSettings(spool.configuration), round: round, mode: mode,
            summary: RoundSummary(round: round, mode: mode, started: .now()),
            schedules: RetrySchedules(spool.configuration).kept(on: spool.spool, log: .silent),
            transport: { _ throws(CurlError) in transport }, clock: { transport.clock.now })
    }

    @Test("a foreground retry waits out its backoff on the round's clock")
    func retriesWaitOutTheBackoff() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        spool.configuration.backoff = [.seconds(30), .seconds(60)]
        try Self.queue(spool, ["r"], subscriber: "alpha")
        let clock = FakeClock()
        let started = clock.now
        let transport = ScriptedTransport(clock: clock) { _, count in
            ScriptedTransport.response(count == 1 ? 503 : 201)
        }
        let wall = MonotonicInstant.now()
        let summary = try Self.pass(spool, mode: .foreground, transport: transport).run()

        #expect(MonotonicInstant.now() - wall < .seconds(5), "no real waiting")
        #expect(clock.now - started >= .seconds(30), "the second attempt waited for the first backoff step")
        #expect(clock.now - started < .seconds(60))
        #expect(transport.started.map(\.key) == ["r", "r"])
        #expect(summary.sent == 1 && summary.retries == 1)
        #expect(try spool.ledger().map(\.event) == [.retry, .sent])
        #expect(try spool.names(in: .sent) == ["r@alpha.json"])
    }

    @Test("entries claimed and not sent, such as twins of settled entries, cost the pass no wait for answers")
    func entriesNotSentCostNoWait() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let ids = ["t1", "t2", "t3"]
        try Self.queue(spool, ids, subscriber: "alpha")
        for id in ids {
            try spool.spool.deliverNewFile(
                Array(#"{"id":"\#(id)","kind":"sleep"}"#.utf8), named: FileName("\(id)@alpha.json"), into: .sent)
        }
        let clock = FakeClock()
        let started = clock.now
        let transport = ScriptedTransport(clock: clock) { _, _ in ScriptedTransport.response(201) }
        let summary = try Self.pass(spool, mode: .background, transport: transport).run()

        #expect(summary.invalid == 3)
        #expect(transport.started.isEmpty)
        // With nothing in flight, an entry that was not sent led the pass to
        // wait up to a second for an answer before it read on.
        #expect(clock.now - started < .milliseconds(100), "the pass waited \(clock.now - started)")
        #expect(try spool.names(in: .sending).isEmpty)
        #expect(try spool.names(in: .needsAttention).filter { $0.hasPrefix("invalid-") }.count == 3)
    }

    @Test("a background round never retries")
    func backgroundRoundsTryOnce() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try Self.queue(spool, ["b"], subscriber: "alpha")
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(503) }
        let summary = try Self.pass(spool, mode: .background, transport: transport).run()
        #expect(transport.started.count == 1)
        #expect(summary.needsAttention == 1)
        #expect(try spool.names(in: .needsAttention) == ["b@alpha.json"])
    }

    @Test("a batch that times out halves the batch size, and its retries go out at the new size")
    func aTimedOutBatchIsHalved() throws {
        var subscriber = try TemporarySpool.subscriber("batchy", url: "http://127.0.0.1:9/", concurrency: 1)
        subscriber.mode = .batch
        subscriber.batch = BatchSettings(size: 8)
        let spool = try TemporarySpool(subscribers: [subscriber])
        try Self.queue(spool, (0..<8).map { "i\($0)" }, subscriber: "batchy")
        let transport = ScriptedTransport(clock: FakeClock()) { request, _ in
            let keys = BatchTests.keys(of: HTTPRequest(method: "POST", target: "/", headers: [], body: request.body))
            if keys.count == 8 {
                return ScriptedTransport.response(0, error: CurlError(CURLE_OPERATION_TIMEDOUT))
            }
            let results = keys.map { #"{"idempotency_key":"\#($0)","status":"OK"}"# }
            return ScriptedTransport.response(200, #"{"results":[\#(results.joined(separator: ","))]}"#)
        }
        let summary = try Self.pass(spool, mode: .foreground, transport: transport).run()

        let sizes = transport.started.map {
            BatchTests.keys(of: HTTPRequest(method: "POST", target: "/", headers: [], body: $0.body)).count
        }
        #expect(sizes == [8, 4, 4])
        #expect(summary.batches["batchy"]?.finalSize == 4)
        #expect(try spool.names(in: .sent).count == 8)
    }

    @Test("finished items are committed in groups: every 100 ms while answers trickle in, not one by one")
    func theGroupCommitWaitsForItsDelay() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try Self.queue(spool, (0..<400).map { "g\($0)" }, subscriber: "alpha")
        let writes = FaultPlan()
        spool.session.faults = writes
        // One answer per millisecond, with eight in flight.
        let transport = ScriptedTransport(clock: FakeClock(), perCollect: 1) { _, _ in ScriptedTransport.response(201) }
        let summary = try Self.pass(spool, mode: .background, transport: transport).run()

        #expect(summary.sent == 400)
        // The ledger's writes only: nothing else of a plain round writes.
        let commits = writes.counts[.write] ?? 0
        #expect((4...6).contains(commits), "\(commits) ledger writes for 400 items arriving 1 ms apart")
        #expect(try spool.names(in: .sent).count == 400)
    }

    @Test("a collect that finishes every request in flight is no reason to commit: the next requests start first")
    func theGroupCommitIsNotCutShortByAnEmptyMoment() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try Self.queue(spool, (0..<400).map { "e\($0)" }, subscriber: "alpha")
        let writes = FaultPlan()
        spool.session.faults = writes
        // Every collect answers all eight in flight at once, a millisecond
        // apart: for an instant after each, nothing is in flight.
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        let summary = try Self.pass(spool, mode: .background, transport: transport).run()

        #expect(summary.sent == 400)
        // 400 lines in 50 ms: one commit at 256 lines, one at the end.
        let commits = writes.counts[.write] ?? 0
        #expect(commits == 2, "\(commits) ledger writes for 400 items answered eight at a time")
        #expect(try spool.names(in: .sent).count == 400)
    }
}
