import Glibc
import Testing

@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierTransport

/// When a pass makes its transport (loading libcurl, 10 ms and more): while
/// the loop waits for an intake group's commit that brings entries to send,
/// not after it, and not at all for a group that brings none.
@Suite struct TransportDuringCommitTests {
    /// A pass over `spool` whose transport factory counts its calls.
    static func pass(_ spool: TemporarySpool, made: Counter) throws -> DeliveryPass {
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        let round = RoundID.make(at: .now())
        return try DeliveryPass(
            session: spool.session, settings: RoundSettings(spool.configuration), round: round, mode: .background,
            summary: RoundSummary(round: round, mode: .background, started: .now()),
            schedules: RetrySchedules(spool.configuration).kept(on: spool.spool, log: .silent),
            transport: { _ throws(CurlError) in
                made.value += 1
                return transport
            }, clock: { transport.clock.now })
    }

    final class Counter: @unchecked Sendable {
        var value = 0
    }

    @Test("the transport is made while the first group's commit is out: a commit that fails finds it made")
    func transportIsMadeWhileTheCommitIsOut() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        for index in 0..<3 { try spool.dropRecord(id: "r\(index)") }
        // The group's commit is the pass's first sync; made after it, the
        // transport would never be made, since nothing is sent.
        spool.session.faults = FaultPlan(failing: .sync, at: 1, with: Errno(EIO))
        let made = Counter()
        #expect(throws: RoundError.self) { try Self.pass(spool, made: made).run() }
        #expect(made.value == 1)
        #expect(try spool.names(in: .queued).count == 3, "the dropped files wait for the next round")
    }

    @Test("a group that brings nothing to send makes no transport while its commit is out")
    func noTransportForAGroupWithNothingToSend() throws {
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", kinds: ["workout"])
        ])
        for index in 0..<3 { try spool.dropRecord(id: "r\(index)", kind: "sleep") }
        let made = Counter()
        let summary = try Self.pass(spool, made: made).run()
        #expect(made.value == 0)
        #expect(summary.sent == 0)
        #expect(try spool.names(in: .queued).isEmpty, "every dropped file was taken in")
    }

    @Test("a pass that sends makes its transport once")
    func transportIsMadeOnce() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        for index in 0..<600 { try spool.dropRecord(id: "r\(index)") }
        let made = Counter()
        let summary = try Self.pass(spool, made: made).run()
        #expect(made.value == 1)
        #expect(summary.sent == 600)
    }
}
