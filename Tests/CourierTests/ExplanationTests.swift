import Foundation
import Testing

@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// What `why` says (issue 12, item 5): each piece of advice describes what
/// courier will really do.
@Suite struct ExplanationTests {
    static let alpha = SubscriberName("alpha")

    static func item(_ state: SpoolState) -> SpoolItem {
        let name = FileName("k@alpha.json")
        return SpoolItem(name: name, state: state, entry: EntryName(fileName: name))
    }

    static func line(_ status: Int, _ detail: String, event: LedgerEvent = .needsAttention) -> LedgerLine {
        LedgerLine(
            time: .now(), round: "r", subscriber: "alpha", key: "k", event: event, status: status, detail: detail)
    }

    @Test(
        "a transient failure in needsAttention/ points to send-now --attention, which sends it again",
        arguments: [
            (0, "tried once (timeout): Operation timed out", "did not answer (timeout); a background round tries once"),
            (
                503, #"tried once (HTTP 503): {"busy":true}"#,
                "was unavailable (HTTP 503); a background round tries once"
            ),
            (503, "retries exhausted (HTTP 503): {}", "was unavailable (HTTP 503); every retry was used"),
            (0, "retries stopped by the breaker (Connection refused): x", "the subscriber was not answering"),
            (429, "written before the words existed", "was unavailable (HTTP 429)"),
        ])
    func transientFailures(status: Int, detail: String, says: String) {
        let text = Explanation.explain(Self.item(.needsAttention), last: Self.line(status, detail))
        #expect(text.contains(says), "\(text)")
        #expect(text.contains("Nothing retries it by itself: `courier send-now --attention` sends it again now"))
        #expect(text.contains("`courier resend k@alpha.json` queues it for the next round"))
    }

    @Test(
        "the words in front of a transient failure do not repeat curl's message",
        arguments: [
            ("timeout: Operation timed out", "Operation timed out", "timeout"),
            ("Couldn't connect to server", "Couldn't connect to server", "no answer"),
            ("timeout: Operation timed out", "Operation timed out: {}", "timeout"),
            ("HTTP 503", #"{"busy":true}"#, "HTTP 503"), ("item status RETRY", "", "item status RETRY"),
        ])
    func briefReasons(reason: String, answer: String, brief: String) {
        #expect(TransientFailure.brief(reason, answer: answer) == brief)
        let line = Self.line(0, TransientFailure.triedOnce.detail(reason: reason, answer))
        #expect(TransientFailure.reason(in: line) == brief)
        #expect(TransientFailure.recorded(in: line))
    }

    @Test(
        "what no retry fixes asks for a fix, and promises no retry",
        arguments: [
            (400, "{}"), (404, "{}"), (0, "SSL certificate problem: unable to get local issuer certificate"),
            (0, "subscriber gone is not configured"),
        ])
    func permanentFailures(status: Int, detail: String) {
        let text = Explanation.explain(Self.item(.needsAttention), last: Self.line(status, detail))
        #expect(text.contains("Fix the cause, then `courier resend k@alpha.json`"), "\(text)")
        #expect(!text.contains("--attention") && !text.contains("later round") && !text.contains("retries"), "\(text)")
    }

    @Test("a queued entry of a held subscriber waits for release")
    func heldEntries() throws {
        let hold = Hold(subscriber: try #require(Self.alpha), since: .now(), reason: "maintenance")
        let text = Explanation.explain(Self.item(.queued), last: nil, context: .init(hold: hold))
        #expect(text.contains("subscriber alpha is held since "), "\(text)")
        #expect(text.contains("(maintenance); rounds send it nothing until `courier release alpha`"))
    }

    @Test("a deferred entry says when it is tried again, and that send-now tries it now")
    func deferredEntries() {
        let now = Timestamp.now()
        let later = DeferralStamp(due: now + .seconds(300), deferrals: 2)
        let text = Explanation.explain(Self.item(.queued), last: nil, context: .init(stamp: later, steps: 5, now: now))
        #expect(text.contains("Deferred after a transient failure (retry 2 of 5 of retry-schedule)"), "\(text)")
        #expect(text.contains("from \(later.due.rfc3339) on tries it again; `courier send-now` tries it now"))
        let due = DeferralStamp(due: now - .seconds(1), deferrals: 1)
        let dueText = Explanation.explain(Self.item(.queued), last: nil, context: .init(stamp: due, now: now))
        #expect(dueText.contains("Due again after a transient failure (retry 1 of retry-schedule): the next round"))
    }

    @Test("a workout waiting for its route says it needs attention after route-wait")
    func awaitingRoute() {
        let text = Explanation.explain(Self.item(.awaitingRoute), last: nil, context: .init(routeWait: .seconds(3600)))
        #expect(text.contains("needs attention if none has come 1h after it was taken in"), "\(text)")
    }
}

@Suite struct ExplanationContextTests {
    @Test("a stamp counts only while the subscriber has a retry-schedule: without one the next round sends it")
    func stampsWithoutASchedule() throws {
        var alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")
        let spool = try TemporarySpool(subscribers: [alpha])
        try DeliveryStageTests.queue(spool, ["k"], subscriber: "alpha")
        let stamp = DeferralStamp(due: .now() + .seconds(600), deferrals: 1)
        try spool.spool.directory(.queued).setModified(FileName("k@alpha.json"), to: stamp.modified)
        let item = ExplanationTests.item(.queued)

        let unscheduled = try Explanation.Context.of(item, in: spool.spool, configuration: spool.configuration)
        #expect(unscheduled.stamp == nil)
        #expect(Explanation.explain(item, last: nil, context: unscheduled).hasPrefix("Waiting for the next round"))

        alpha.retrySchedule = [.seconds(600), .seconds(3600)]
        spool.configuration.subscribers = [alpha]
        let scheduled = try Explanation.Context.of(item, in: spool.spool, configuration: spool.configuration)
        #expect(scheduled.stamp == stamp && scheduled.steps == 2)
        #expect(Explanation.explain(item, last: nil, context: scheduled).contains("(retry 1 of 2 of retry-schedule)"))
    }
}
