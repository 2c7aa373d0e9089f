import Foundation
import Testing

@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierTransport

/// Retries across rounds (issue 12, item 2): `retry-schedule` puts a
/// transiently failed entry back in queued/ with its next attempt as its
/// modification time.
@Suite struct RetryScheduleTests {
    @Test("a retry-schedule has at most as many steps as a deferral stamp counts")
    func theScheduleFitsTheStamp() throws {
        #expect(Configuration.maximumRetrySteps == DeferralStamp.limit)
        let steps = (1...DeferralStamp.limit + 1).map { _ in "1m" }
        let file = "/etc/courier/courier.conf"
        let subscriber = "[subscriber alpha]\nurl = https://alpha.example/r\n"
        let longest = Array(
            "[courier]\nretry-schedule = \(steps.dropLast().joined(separator: " "))\n\(subscriber)".utf8)
        #expect(try Configuration.parse(longest, file: file).defaultRetrySchedule?.count == DeferralStamp.limit)
        let tooLong = Array("[courier]\nretry-schedule = \(steps.joined(separator: " "))\n\(subscriber)".utf8)
        let refusal = #expect(throws: ConfigError.self) { try Configuration.parse(tooLong, file: file) }
        #expect(
            refusal?.description.contains("give 1 to \(DeferralStamp.limit) durations") == true,
            "\(String(describing: refusal))")
    }

    @Test("a deferral stamp keeps the next attempt in whole seconds and the count in the nanoseconds")
    func stampsRoundTrip() throws {
        let asked = Timestamp(secondsSinceEpoch: 1_800_000_000, nanoseconds: 250_000_000)
        let stamp = DeferralStamp(due: asked, deferrals: 3)
        #expect(stamp.due == Timestamp(secondsSinceEpoch: 1_800_000_001), "rounded up, never earlier than asked")
        #expect(stamp.modified == Timestamp(secondsSinceEpoch: 1_800_000_001, nanoseconds: 3))
        #expect(DeferralStamp(modified: stamp.modified) == stamp)
        #expect(DeferralStamp.cleared(stamp.modified) == Timestamp(secondsSinceEpoch: 1_800_000_001))
    }

    @Test(
        "a time courier did not stamp is no stamp: whole seconds, a touch's nanoseconds",
        arguments: [0, 21, 123_456_789, 999_999_999])
    func otherTimesAreNoStamp(nanoseconds: Int64) {
        #expect(DeferralStamp(modified: Timestamp(secondsSinceEpoch: 1_800_000_000, nanoseconds: nanoseconds)) == nil)
    }

    @Test("a round reads retry-schedule once, into the value its stages share: each subscriber's own waits or none")
    func theRoundsSchedulesAreReadOnce() throws {
        var alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")
        alpha.retrySchedule = [.seconds(60), .seconds(300)]
        let beta = try TemporarySpool.subscriber("beta", url: "http://127.0.0.1:9/")
        let spool = try TemporarySpool(subscribers: [alpha, beta])
        let schedules = RetrySchedules(spool.configuration).kept(on: spool.spool, log: .silent)
        #expect(schedules.schedule(of: alpha.name) == [.seconds(60), .seconds(300)])
        #expect(schedules.schedule(of: beta.name) == nil)
        #expect(schedules.scheduled == [alpha.name])
        let unscheduled = RetrySchedules(Configuration(spool: spool.path, subscribers: [beta]))
            .kept(on: spool.spool, log: .silent)
        #expect(unscheduled.scheduled.isEmpty)
    }
}

/// The schedule in rounds, through the scripted transport: no sockets, no
/// sleeps; the wall clock is real, and time passing is a stamp moved back.
@Suite struct DeferralTests {
    static func spool(schedule: [Duration]? = [.seconds(60), .seconds(300), .seconds(1800)]) throws -> TemporarySpool {
        var alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")
        alpha.retrySchedule = schedule
        return try TemporarySpool(subscribers: [alpha])
    }

    static func answering(_ status: Int, retryAfter: String? = nil) -> ScriptedTransport {
        ScriptedTransport(clock: FakeClock()) { _, _ in
            DeliveryResponse(
                status: status, error: nil, retryAfter: retryAfter, answer: Array(#"{"busy":true}"#.utf8),
                duration: .milliseconds(1))
        }
    }

    static func stamp(_ spool: TemporarySpool, _ name: String, in state: SpoolState = .queued) throws
        -> DeferralStamp?
    {
        let status = try #require(try spool.spool.directory(state).status(of: FileName(name)))
        return DeferralStamp(modified: status.modified)
    }

    /// Time passing for an entry: its stamp, due `ago` in the past.
    static func makeDue(_ spool: TemporarySpool, _ name: String, deferrals: Int, ago: Duration = .seconds(1)) throws {
        let stamp = DeferralStamp(due: .now() - ago, deferrals: deferrals)
        try spool.spool.directory(.queued).setModified(FileName(name), to: stamp.modified)
    }

    @Test("with retry-schedule, a 503 in a background round puts the entry back in queued/ due after the first step")
    func aTransientFailureIsDeferred() throws {
        let spool = try Self.spool()
        try DeliveryStageTests.queue(spool, ["d"], subscriber: "alpha")
        let before = Timestamp.now()
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: Self.answering(503)).run()

        #expect(try spool.names(in: .queued) == ["d@alpha.json"])
        #expect(try spool.names(in: .needsAttention).isEmpty && spool.names(in: .sending).isEmpty)
        let stamp = try #require(try Self.stamp(spool, "d@alpha.json"))
        #expect(stamp.deferrals == 1)
        #expect(stamp.due >= before + .seconds(60) && stamp.due <= Timestamp.now() + .seconds(61))
        let line = try #require(try spool.ledger().last)
        #expect(line.event == .deferred && line.status == 503)
        #expect(line.detail.hasPrefix("next attempt \(stamp.due.rfc3339), retry 1 of 3 (HTTP 503): {\"busy\""))
        #expect(summary.deferred == 1 && summary.needsAttention == 0)
    }

    @Test("a background round passes over a deferred entry until it is due, then tries it and waits the next step")
    func roundsSkipEntriesNotYetDue() throws {
        let spool = try Self.spool()
        try DeliveryStageTests.queue(spool, ["d"], subscriber: "alpha")
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: Self.answering(503)).run()

        let early = Self.answering(503)
        let skipped = try DeliveryStageTests.pass(spool, mode: .background, transport: early).run()
        #expect(early.started.isEmpty)
        #expect(skipped.notDue == 1)
        #expect(try Self.stamp(spool, "d@alpha.json")?.deferrals == 1)

        try Self.makeDue(spool, "d@alpha.json", deferrals: 1)
        let due = Self.answering(500)
        let before = Timestamp.now()
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: due).run()
        #expect(due.started.map(\.key) == ["d"])
        let stamp = try #require(try Self.stamp(spool, "d@alpha.json"))
        #expect(stamp.deferrals == 2)
        #expect(stamp.due >= before + .seconds(300) && stamp.due <= Timestamp.now() + .seconds(301))
    }

    @Test("after the last step a transient failure needs attention, and the entry's stamp is taken off")
    func theLastStepNeedsAttention() throws {
        let spool = try Self.spool()
        try DeliveryStageTests.queue(spool, ["d"], subscriber: "alpha")
        try Self.makeDue(spool, "d@alpha.json", deferrals: 3)
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: Self.answering(503)).run()

        #expect(try spool.names(in: .needsAttention) == ["d@alpha.json"])
        #expect(try Self.stamp(spool, "d@alpha.json", in: .needsAttention) == nil)
        let line = try #require(try spool.ledger().last)
        #expect(line.event == .needsAttention)
        #expect(line.detail.hasPrefix("retries exhausted (HTTP 503): "))
        #expect(summary.needsAttention == 1 && summary.deferred == 0)
    }

    @Test("a success takes the stamp off, so that a later backfill starts the schedule again")
    func aSuccessClearsTheStamp() throws {
        let spool = try Self.spool()
        try DeliveryStageTests.queue(spool, ["d"], subscriber: "alpha")
        try Self.makeDue(spool, "d@alpha.json", deferrals: 2)
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: Self.answering(201)).run()
        #expect(try spool.names(in: .sent) == ["d@alpha.json"])
        #expect(try Self.stamp(spool, "d@alpha.json", in: .sent) == nil)
    }

    @Test("a Retry-After longer than the step is honoured, up to the longest step")
    func retryAfterIsHonoured() throws {
        let spool = try Self.spool()
        try DeliveryStageTests.queue(spool, ["a", "b"], subscriber: "alpha")
        let transport = ScriptedTransport(clock: FakeClock()) { request, _ in
            DeliveryResponse(
                status: 429, error: nil, retryAfter: request.key == "a" ? "900" : "86400", answer: [],
                duration: .milliseconds(1))
        }
        let before = Timestamp.now()
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        let a = try #require(try Self.stamp(spool, "a@alpha.json"))
        let b = try #require(try Self.stamp(spool, "b@alpha.json"))
        #expect(a.due >= before + .seconds(900) && a.due <= Timestamp.now() + .seconds(901))
        #expect(b.due >= before + .seconds(1800) && b.due <= Timestamp.now() + .seconds(1801), "capped at 30m")
    }

    @Test("only transient failures are deferred: a 400 needs attention at once")
    func refusalsAreNotDeferred() throws {
        let spool = try Self.spool()
        try DeliveryStageTests.queue(spool, ["d"], subscriber: "alpha")
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: Self.answering(400)).run()
        #expect(try spool.names(in: .needsAttention) == ["d@alpha.json"])
        #expect(try spool.ledger().last?.detail == #"refused (HTTP 400): {"busy":true}"#)
    }

    @Test("without retry-schedule a background round tries once, and says so in the ledger")
    func theDefaultTriesOnce() throws {
        let spool = try Self.spool(schedule: nil)
        try DeliveryStageTests.queue(spool, ["d"], subscriber: "alpha")
        try Self.makeDue(spool, "d@alpha.json", deferrals: 1, ago: .seconds(-3600))
        let transport = Self.answering(503)
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(transport.started.count == 1, "no schedule: a time in the future means nothing")
        #expect(try spool.names(in: .needsAttention) == ["d@alpha.json"])
        #expect(try spool.ledger().last?.detail == #"tried once (HTTP 503): {"busy":true}"#)
    }

    @Test("send-now tries deferred entries whether due or not; one that fails again waits its next step")
    func aForegroundRoundTriesEntriesNotYetDue() throws {
        let spool = try Self.spool()
        try DeliveryStageTests.queue(spool, ["d"], subscriber: "alpha")
        try Self.makeDue(spool, "d@alpha.json", deferrals: 1, ago: .seconds(-3600))
        let transport = Self.answering(503)
        let summary = try DeliveryStageTests.pass(spool, mode: .foreground, transport: transport).run()
        #expect(transport.started.count == 3, "the first try and the round's two backoff retries")
        #expect(try spool.names(in: .queued) == ["d@alpha.json"])
        #expect(try Self.stamp(spool, "d@alpha.json")?.deferrals == 2)
        #expect(try spool.ledger().map(\.event) == [.retry, .retry, .deferred])
        #expect(summary.deferred == 1 && summary.retries == 2)
    }

    @Test("status looks for deferral stamps only on the entries of subscribers with a retry-schedule")
    func theSurveyLooksOnlyWhereARoundWould() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try DeliveryStageTests.queue(spool, ["late"], subscriber: "alpha")
        let stamp = DeferralStamp(due: .now() + .seconds(600), deferrals: 1)
        try spool.spool.directory(.queued).setModified(FileName("late@alpha.json"), to: stamp.modified)
        let alpha = try TemporarySpool.subscriberName("alpha")
        #expect(try DeferredEntries.survey(spool.spool, of: [alpha]).count == 1)
        #expect(try DeferredEntries.survey(spool.spool, of: nil).count == 1)
        #expect(
            try DeferredEntries.survey(spool.spool, of: []).count == 0, "alpha has no schedule: a round sends it now")
    }

    @Test("a spool that keeps the nanoseconds of file times can keep deferral stamps")
    func thisSpoolKeepsStamps() throws {
        let spool = try Self.spool()
        #expect(spool.spool.keepsDeferralStamps())
        #expect(try spool.spool.tmp.sortedNames().isEmpty, "the probe is removed")
    }
}

@Suite struct EntryTimeTests {
    @Test("an entry courier may not set the time of is replaced by courier's own copy of its bytes, with the time")
    func aForeignEntryIsCopied() throws {
        let spool = try TemporarySpool()
        let name = FileName("x@alpha.json")
        let bytes = Array(#"{"id":"x","kind":"sleep"}"#.utf8)
        try spool.spool.deliverNewFile(bytes, named: name, into: .sending)
        let stamp = DeferralStamp(due: .now() + .seconds(60), deferrals: 1)
        // As root every time can be set, so the way taken for a file of
        // another user is taken here directly.
        let sending = spool.spool.directory(.sending)
        #expect(try spool.session.replaceWithOwnCopy(name, in: sending, modified: stamp.modified))
        #expect(try spool.spool.read(name, in: .sending, limit: 1024) == bytes)
        let status = try #require(try spool.spool.directory(.sending).status(of: name))
        #expect(DeferralStamp(modified: status.modified) == stamp)
        #expect(status.links == 1)
        #expect(try spool.spool.tmp.sortedNames().isEmpty)
        #expect(
            try !spool.session.replaceWithOwnCopy(FileName("gone@alpha.json"), in: sending, modified: stamp.modified))
    }
}
