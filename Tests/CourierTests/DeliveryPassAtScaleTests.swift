import CCurl
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierTransport

/// A delivery pass past `SubscriberTable`'s scan limit, settling into the
/// group commit in place, and the request's constant-named header fields:
/// rounds to tens of subscribers, breakers opening, deferrals, batches, a
/// failing commit and a pass stopped midway, each checked against what the
/// spool and the ledger must then hold.
@Suite struct DeliveryPassAtScaleTests {
    static func name(_ text: String) throws -> SubscriberName {
        try #require(SubscriberName(String(decoding: Array(text.utf8), as: UTF8.self)))
    }

    static func longName(_ number: Int) throws -> SubscriberName {
        try name("subscriber-with-a-long-name-\(number)")
    }

    /// The number a test's subscriber name ends in.
    static func number(of name: SubscriberName) -> Int {
        Int(name.value.split(separator: "-").last ?? "") ?? -1
    }

    // MARK: SubscriberTable at the boundary

    @Test("at 16 and 17 names, removing first, middle and last keeps every other name found", arguments: [16, 17, 18])
    func boundaryRemovals(size: Int) throws {
        for removed in [0, size / 2, size - 1] {
            var table = SubscriberTable<Int>()
            var model: [SubscriberName: Int] = [:]
            for number in 0..<size {
                table[try Self.longName(number)] = number
                model[try Self.longName(number)] = number
            }
            // Removal through each path.
            let victim = try Self.longName(removed)
            switch removed % 3 {
            case 0: table.removeValue(forKey: victim)
            case 1: table[victim] = nil
            default: if table[victim] != nil { table[victim] = nil }
            }
            model[victim] = nil
            #expect(table.count == model.count)
            for number in 0..<(size + 2) {
                let name = try Self.longName(number)
                #expect(table[name] == model[name], "size \(size) removed \(removed) looking up \(number)")
            }
            // Modify in place and via default after the reindex.
            for number in 0..<(size + 2) {
                let name = try Self.longName(number)
                table[name, default: 1000] += 1
                model[name, default: 1000] += 1
                table[name]? += 1
                model[name]? += 1
            }
            for number in 0..<(size + 2) {
                let name = try Self.longName(number)
                #expect(table[name] == model[name])
            }
            #expect(table.count == model.count)
        }
    }

    @Test("a value set to nil through `?.` style in-place access at 17 names removes it and the index follows")
    func nilThroughModifyAtSeventeen() throws {
        var table = SubscriberTable<[Int]>()
        for number in 0..<17 { table[try Self.longName(number), default: []].append(number) }
        let third = try Self.longName(3)
        // optional-chained mutate, then set to nil through a helper taking inout Optional
        table[third]?.append(99)
        func clear(_ value: inout [Int]?) { value = nil }
        clear(&table[third])
        #expect(table[third] == nil)
        #expect(table.count == 16)
        for number in 0..<17 where number != 3 {
            #expect(table[try Self.longName(number)] == [number])
        }
        // Back above the limit, then the new name and an old one.
        table[try Self.longName(40)] = [40]
        table[third] = [3]
        #expect(table.count == 18)
        for number in 0..<17 { #expect(table[try Self.longName(number)] == [number]) }
        #expect(table[try Self.longName(40)] == [40])
    }

    // MARK: GroupCommit.gather bookkeeping

    @Test("gather that adds nothing sets no deadline; one that adds keeps the first time")
    func gatherDeadline() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let commits = GroupCommit(session: spool.session, log: .silent)
        let t0 = MonotonicInstant.now()
        commits.gather(at: t0) { _ in () }
        #expect(commits.deadline == nil)
        #expect(commits.isDue(at: t0 + .seconds(10)) == false)
        let settling = try CommitThreadTests.settling("a", in: spool)
        commits.gather(at: t0 + .milliseconds(5)) { $0.append(settling) }
        #expect(commits.oldest == t0 + .milliseconds(5))
        commits.gather(at: t0 + .milliseconds(50)) { _ in () }
        #expect(commits.oldest == t0 + .milliseconds(5))
        #expect(commits.isDue(at: t0 + .milliseconds(105)))
        try commits.finish()
        #expect(commits.oldest == nil)
        #expect(try spool.names(in: .sent) == ["a@alpha.json"])
    }

    // MARK: headers

    @Test("constant-named fields agree with the general initialiser on every single scalar and mixed strings")
    func headerParity() throws {
        var values: [String] = []
        for scalar in 0...0x2FF { values.append("x" + String(UnicodeScalar(UInt8(truncatingIfNeeded: scalar))) + "y") }
        for scalar in [0x85, 0x2028, 0x2029, 0xFEFF, 0x1F600] as [UInt32] {
            values.append("v" + String(try #require(Unicode.Scalar(scalar))))
        }
        values.append(String(NSString(string: "abc\r\ndef")))
        values.append(NSString(string: "ab\u{0}c") as String)
        values.append(String(repeating: "é", count: 40) + "\n")
        values.append(String("long-value-".utf8.map { Character(UnicodeScalar($0)) }) + "\u{7F}")
        values.append(String(Substring("prefix\rsuffix".dropFirst(2))))
        for value in values {
            for name: StaticString in ["If-Match", "Authorization", "Idempotency-Key"] {
                let general = Result { () throws(HeaderFieldError) in try HTTPHeaderField(name: "\(name)", value: value)
                }
                let constant = Result { () throws(HeaderFieldError) in try HTTPHeaderField(constant: name, value: value)
                }
                #expect(general == constant, "\(value.debugDescription)")
                let bad = value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
                if case .success = constant { #expect(!bad, "\(value.debugDescription) accepted") }
            }
        }
    }

    // MARK: rounds

    static let timeout = CurlError(CURLE_OPERATION_TIMEDOUT, detail: "Operation timed out after 1000 ms")

    /// 40 subscribers with long names: every fifth never answers (breaker
    /// 3), every seventh answers 503 and has a retry schedule (deferred to
    /// queued/ in the pass), the rest answer 201.
    @Test(
        "a round to 40 subscribers, some stopped by the breaker, some deferring, settles each entry once",
        arguments: [RoundMode.background, .foreground])
    func fortySubscribers(mode: RoundMode) throws {
        var subscribers: [Subscriber] = []
        for number in 0..<40 {
            var subscriber = try TemporarySpool.subscriber(
                "subscriber-with-a-long-name-\(number)", url: "http://127.0.0.1:9/", concurrency: 2)
            if number % 5 == 0 { subscriber.breaker = .after(3) }
            if number % 7 == 3 { subscriber.retrySchedule = [.seconds(60)] }
            subscribers.append(subscriber)
        }
        let spool = try TemporarySpool(subscribers: subscribers)
        for number in 0..<40 {
            try DeliveryStageTests.queue(
                spool, (0..<12).map { "k\(number)x\($0)" }, subscriber: "subscriber-with-a-long-name-\(number)")
        }
        let transport = ScriptedTransport(clock: FakeClock(), perCollect: 3) { request, _ in
            let number = Self.number(of: request.subscriber.name)
            if number % 5 == 0 { return ScriptedTransport.response(0, error: Self.timeout) }
            if number % 7 == 3 { return ScriptedTransport.response(503) }
            return ScriptedTransport.response(201)
        }
        let summary = try DeliveryStageTests.pass(spool, mode: mode, transport: transport).run()

        #expect(try spool.names(in: .sending).isEmpty)
        let sent = Set(try spool.names(in: .sent))
        let queued = Set(try spool.names(in: .queued))
        let attention = Set(try spool.names(in: .needsAttention))
        #expect(sent.count + queued.count + attention.count == 480)
        var startedPerKey: [String: Int] = [:]
        for request in transport.started { startedPerKey[request.key, default: 0] += 1 }
        for number in 0..<40 {
            let name = "subscriber-with-a-long-name-\(number)"
            let keys = (0..<12).map { "k\(number)x\($0)" }
            let files = keys.map { "\($0)@\(name).json" }
            if number % 5 == 0 {
                let tried = keys.filter { startedPerKey[$0] != nil }
                #expect(tried.count <= 4, "\(name): \(tried.count) tried after the breaker")
                #expect(summary.notAnswering?[name] != nil, "\(name) not reported stopped")
            } else if number % 7 == 3 {
                // Deferred into queued/ during the pass: the stream must not take them again.
                let maxTries = mode == .foreground ? 3 : 1
                for key in keys {
                    #expect(
                        (startedPerKey[key] ?? 0) == maxTries, "\(name) \(key) tried \(startedPerKey[key] ?? 0) times")
                }
                #expect(files.allSatisfy { queued.contains($0) }, "\(name) entries not all deferred")
            } else {
                for key in keys { #expect(startedPerKey[key] == 1, "\(name) \(key) tried \(startedPerKey[key] ?? 0)") }
                #expect(files.allSatisfy { sent.contains($0) }, "\(name) entries not all sent")
            }
        }
        #expect(summary.notAnswering?.count == 8)
        let ledger = try spool.ledger()
        // Every deferred entry has exactly one deferred line.
        let deferred = ledger.filter { $0.event == .deferred }
        #expect(deferred.count == Set(deferred.map { "\($0.subscriber)/\($0.key)" }).count)
        // 3, 17, 24, 31, 38 defer all 12; 10 is also dead (breaker), its tried ones defer.
        #expect(summary.deferred == 5 * 12 + (startedPerKey.keys.filter { $0.hasPrefix("k10x") }.count))
    }

    @Test(
        "a deferral's move to queued/ is not taken again by the stream in the same pass (one subscriber, many entries)")
    func deferralsNotTakenTwice() throws {
        var alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: 4)
        alpha.retrySchedule = [.seconds(60), .seconds(120)]
        let spool = try TemporarySpool(subscribers: [alpha])
        try DeliveryStageTests.queue(spool, (0..<600).map { "a\($0)" }, subscriber: "alpha")
        let transport = ScriptedTransport(clock: FakeClock(), perCollect: 1) { _, _ in ScriptedTransport.response(503) }
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(transport.started.count == 600)
        #expect(summary.deferred == 600)
        #expect(try spool.names(in: .queued).count == 600)
        #expect(try spool.ledger().filter { $0.event == .deferred }.count == 600)
    }

    @Test("batch subscribers beside 20 single ones: a timeout halves, etags kept, and all settle")
    func batchAmongMany() throws {
        var subscribers: [Subscriber] = []
        for number in 0..<20 {
            subscribers.append(
                try TemporarySpool.subscriber("single-subscriber-long-\(number)", url: "http://127.0.0.1:9/"))
        }
        var batchy = try TemporarySpool.subscriber(
            "batchy-with-a-long-name", url: "http://127.0.0.1:9/", concurrency: 1)
        batchy.mode = .batch
        batchy.batch = BatchSettings(size: 8)
        subscribers.append(batchy)
        let spool = try TemporarySpool(subscribers: subscribers)
        for number in 0..<20 {
            try DeliveryStageTests.queue(
                spool, (0..<5).map { "s\(number)y\($0)" }, subscriber: "single-subscriber-long-\(number)")
        }
        try DeliveryStageTests.queue(spool, (0..<16).map { "b\($0)" }, subscriber: "batchy-with-a-long-name")
        let transport = ScriptedTransport(clock: FakeClock(), perCollect: 2) { request, _ in
            guard request.subscriber.mode == .batch else { return ScriptedTransport.response(201) }
            let keys = AdaptiveBatchTests.keys(request)
            if keys.count == 8 { return ScriptedTransport.response(0, error: CurlError(CURLE_OPERATION_TIMEDOUT)) }
            let results = keys.map {
                #"{"idempotency_key":"\#($0)","status":"OK","etag":"\"v-\#($0)\"","id":"srv-\#($0)"}"#
            }
            return ScriptedTransport.response(200, #"{"results":[\#(results.joined(separator: ","))]}"#)
        }
        let summary = try DeliveryStageTests.pass(spool, mode: .foreground, transport: transport).run()
        #expect(try spool.names(in: .sending).isEmpty)
        #expect(try spool.names(in: .sent).count == 116)
        let finalSize = try #require(summary.batches["batchy-with-a-long-name"]?.finalSize)
        // The batch of 8 timed out: halved to 4, its items went again 4 at a
        // time, and 4 answered in a row grow it by a quarter (`BatchSizes`), not to 8.
        #expect((4..<8).contains(finalSize), "sizes \(AdaptiveBatchTests.sizes(transport).filter { $0 > 1 })")
        #expect(AdaptiveBatchTests.sizes(transport).filter { $0 > 1 }.contains(4))
        for number in 0..<16 {
            let kept = try EntityTagStore(spool: spool.spool).tag(
                of: #require(RecordID("b\(number)")), from: TemporarySpool.subscriberName("batchy-with-a-long-name"))
            #expect(kept?.etag == "\"v-b\(number)\"", "b\(number): \(String(describing: kept))")
        }
        #expect(AdaptiveBatchTests.sizes(transport).filter { $0 > 1 }.first == 8)
    }

    @Test("a commit failing with ENOSPC after answers settled in place: the pass fails, nothing is lost from sending/")
    func enospcAfterSettling() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try DeliveryStageTests.queue(spool, (0..<50).map { "a\($0)" }, subscriber: "alpha")
        spool.session.faults = FaultPlan(failing: .write, at: 1, with: Errno(ENOSPC))
        let transport = ScriptedTransport(clock: FakeClock(), perCollect: 1) { _, _ in ScriptedTransport.response(201) }
        #expect(throws: RoundError.self) {
            try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        }
        spool.session.faults = nil
        let sending = try spool.names(in: .sending).count
        let sent = try spool.names(in: .sent).count
        let queued = try spool.names(in: .queued).count
        #expect(sending + sent + queued == 50, "sending \(sending) sent \(sent) queued \(queued)")
        // Every entry that is in sent/ has its ledger line.
        let lines = Set(try spool.ledger().filter { $0.event == .sent }.map(\.key))
        for file in try spool.names(in: .sent) { #expect(lines.contains(String(file.split(separator: "@")[0]))) }
    }

    @Test("a record whose etag holds CR LF, NUL or DEL never reaches the transport; a clean one goes as If-Match")
    func hostileEtagsNeverReachTheWire() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let hostile = [#""v1\r\nX-Injected: 1""#, #""v\u0000""#, #""v\u007f""#, #""v\n""#, #""a\tb""#]
        for (number, tag) in hostile.enumerated() {
            try spool.spool.deliverNewFile(
                Array(#"{"id":"h\#(number)","kind":"sleep","op":"UPDATE","etag":\#(tag)}"#.utf8),
                named: FileName("h\(number)@alpha.json"), into: .queued)
        }
        try spool.spool.deliverNewFile(
            Array(#"{"id":"ok","kind":"sleep","op":"UPDATE","etag":"\"v-ok\""}"#.utf8),
            named: FileName("ok@alpha.json"),
            into: .queued)
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        _ = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(transport.started.map(\.key) == ["ok"])
        for request in transport.started {
            for field in request.extraHeaders {
                #expect(
                    !field.value.utf8.contains { ($0 < 0x20 && $0 != 9) || $0 == 0x7F },
                    "\(field.line.debugDescription)")
            }
            #expect(request.extraHeaders.map(\.line) == [#"If-Match: "v-ok""#])
        }
        #expect(try spool.names(in: .sent) == ["ok@alpha.json"])
        #expect(try spool.names(in: .needsAttention).count + (try spool.names(in: .queued).count) == hostile.count)
    }

    @Test("a pass stopped by a transport error mid-pass commits every answer it settled in place, and loses nothing")
    func stoppedMidPassCommitsWhatWasSettled() throws {
        var alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: 8)
        alpha.retrySchedule = [.seconds(60)]
        let spool = try TemporarySpool(subscribers: [alpha])
        try DeliveryStageTests.queue(spool, (0..<40).map { "a\($0)" }, subscriber: "alpha")
        let inner = ScriptedTransport(clock: FakeClock(), perCollect: 2) { request, _ in
            // Every third deferred back to queued/, the rest sent.
            ((Int(request.key.dropFirst()) ?? 0) % 3 == 0)
                ? ScriptedTransport.response(503) : ScriptedTransport.response(201)
        }
        let transport = FailingTransport(inner, failAt: 6)
        let round = RoundID.make(at: .now())
        let pass = try DeliveryPass(
            session: spool.session, settings: RoundSettings(spool.configuration), round: round, mode: .background,
            summary: RoundSummary(round: round, mode: .background, started: .now()),
            schedules: RetrySchedules(spool.configuration).kept(on: spool.spool, log: .silent),
            transport: { _ throws(CurlError) in transport }, clock: { inner.clock.now })
        #expect(throws: RoundError.self) { try pass.run() }
        let sent = try spool.names(in: .sent)
        let queued = try spool.names(in: .queued)
        let sending = try spool.names(in: .sending)
        #expect(sent.count + queued.count + sending.count == 40)
        let ledger = try spool.ledger()
        let sentLines = Set(ledger.filter { $0.event == .sent }.map { "\($0.key)@alpha.json" })
        let deferredLines = Set(ledger.filter { $0.event == .deferred }.map { "\($0.key)@alpha.json" })
        #expect(Set(sent) == sentLines)
        #expect(sentLines.count + deferredLines.count == 10, "five collects of two answers settled")
        #expect(deferredLines.isSubset(of: Set(queued)))
        #expect(Set(sending).isDisjoint(with: sentLines.union(deferredLines)))
    }

    @Test("dropped files fanned out to 20 subscribers, 4 of them stopped by the breaker while intake groups arrive")
    func intakeFanOutWithBreakers() throws {
        var subscribers: [Subscriber] = []
        for number in 0..<20 {
            var subscriber = try TemporarySpool.subscriber(
                "fan-out-subscriber-\(number)", url: "http://127.0.0.1:9/", concurrency: 3)
            if number % 5 == 1 { subscriber.breaker = .after(2) }
            subscribers.append(subscriber)
        }
        let spool = try TemporarySpool(subscribers: subscribers)
        for number in 0..<300 { try spool.dropRecord(id: "r\(number)") }
        let transport = ScriptedTransport(clock: FakeClock(), perCollect: 5) { request, _ in
            let number = Self.number(of: request.subscriber.name)
            return number % 5 == 1
                ? ScriptedTransport.response(0, error: Self.timeout) : ScriptedTransport.response(201)
        }
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(try spool.names(in: .sending).isEmpty)
        var started: [String: Int] = [:]
        for request in transport.started { started["\(request.key)@\(request.subscriber.name)", default: 0] += 1 }
        #expect(started.values.allSatisfy { $0 == 1 }, "\(started.filter { $0.value > 1 }.prefix(5))")
        let sent = try spool.names(in: .sent)
        let queued = try spool.names(in: .queued)
        let attention = try spool.names(in: .needsAttention)
        for number in 0..<20 {
            let name = "fan-out-subscriber-\(number)"
            let mine = { (names: [String]) in names.filter { $0.hasSuffix("@\(name).json") }.count }
            if number % 5 == 1 {
                #expect(mine(sent) == 0)
                #expect(mine(queued) + mine(attention) == 300, "\(name): \(mine(queued)) + \(mine(attention))")
                #expect(mine(attention) <= 4)
            } else {
                #expect(mine(sent) == 300, "\(name) sent \(mine(sent))")
            }
        }
        #expect(summary.notAnswering?.count == 4)
    }
}

/// Throws at the `failAt`th collect; otherwise the scripted transport.
final class FailingTransport: Transport {
    let inner: ScriptedTransport
    let failAt: Int
    private var collects = 0

    init(_ inner: ScriptedTransport, failAt: Int) {
        self.inner = inner
        self.failAt = failAt
    }

    func start(_ request: DeliveryRequest, headers: HeaderLines, tag: Int) throws(CurlError) {
        try inner.start(request, headers: headers, tag: tag)
    }

    func collect(wait: Duration, signal: Int32?) throws(CurlError) -> [(tag: Int, response: DeliveryResponse)] {
        collects += 1
        if collects == failAt { throw CurlError(CURLE_OUT_OF_MEMORY) }
        return try inner.collect(wait: wait, signal: signal)
    }
}
