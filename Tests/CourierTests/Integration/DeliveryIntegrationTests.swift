import Foundation
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// docs/design.md §3 through real rounds against a loopback server.
@Suite(.tags(.integration)) struct DeliveryTests {
    static func oneRecordRound(
        server: LoopbackServer, mode: RoundMode = .background, adjust: (inout Configuration) -> Void = { _ in }
    ) throws -> (TemporarySpool, RoundSummary) {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        adjust(&spool.configuration)
        try spool.dropRecord(id: "r-1")
        let summary = try spool.runRound(mode)
        return (spool, summary)
    }

    @Test(arguments: [
        (200, SpoolState.sent), (201, .sent), (204, .sent),
        (408, .needsAttention), (429, .needsAttention), (500, .needsAttention), (503, .needsAttention),
        (400, .needsAttention), (401, .needsAttention), (404, .needsAttention), (409, .needsAttention),
        (412, .needsAttention), (422, .needsAttention), (301, .needsAttention), (302, .needsAttention),
    ])
    func backgroundRoundPlacesEachAnswer(status: Int, expected: SpoolState) throws {
        let server = try LoopbackServer(status: status, body: #"{"answer":\#(status)}"#)
        let (spool, summary) = try Self.oneRecordRound(server: server)
        #expect(try spool.names(in: expected) == ["r-1@alpha.json"])
        #expect(try spool.placements().count == 1)
        #expect(server.requests.count == 1, "a background round makes one attempt")
        let last = try #require(try spool.ledger().last)
        #expect(last.event == (expected == .sent ? .sent : .needsAttention))
        #expect(last.status == status)
        #expect(last.attempt == 1)
        // A 204 has no body by definition; every other answer is in the ledger.
        #expect(last.detail.contains(#"{"answer":\#(status)}"#) == (status != 204))
        #expect(summary.sent + summary.needsAttention == 1)
    }

    @Test func aTimeoutNeedsAttention() throws {
        let server = try LoopbackServer { _, _ in .stall(.seconds(3)) }
        let (spool, _) = try Self.oneRecordRound(server: server) { $0.backgroundTimeout = .milliseconds(300) }
        #expect(try spool.names(in: .needsAttention) == ["r-1@alpha.json"])
        let last = try #require(try spool.ledger().last)
        #expect(last.status == 0)
        #expect(last.detail.lowercased().contains("timed out"))
    }

    @Test func aResetNeedsAttention() throws {
        let server = try LoopbackServer { _, _ in .reset }
        let (spool, _) = try Self.oneRecordRound(server: server)
        #expect(try spool.names(in: .needsAttention) == ["r-1@alpha.json"])
        #expect(try spool.ledger().last?.status == 0)
    }

    @Test func garbageAnswersNeedAttention() throws {
        let server = try LoopbackServer { _, _ in .raw(Array("NOT HTTP AT ALL\r\n\r\n".utf8)) }
        let (spool, _) = try Self.oneRecordRound(server: server)
        #expect(try spool.names(in: .needsAttention) == ["r-1@alpha.json"])
    }

    @Test func refusedConnectionsNeedAttention() throws {
        // Bound and held, never listening: refused however busy the machine's ports are.
        let refusing = try RefusingPort()
        let url = "http://\(refusing.address)/gone"
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: url)])
        try spool.dropRecord(id: "r-1")
        try spool.runRound()
        #expect(try spool.names(in: .needsAttention) == ["r-1@alpha.json"])
        #expect(try spool.ledger().last?.detail.contains("onnect") == true)
        withExtendedLifetime(refusing) {}
    }

    @Test func everyHeaderIsSentAndTheBodyIsUnchanged() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber(
                "alpha", url: server.url, token: "t0k3n", headers: [HTTPHeaderField(constant: "X-Tenant", "acme")])
        ])
        let body = #"{ "id" : "w-1", "kind":"sleep",   "data": {"note":"ünïcode \n and spaces"} }"#
        try spool.drop(body, as: "anything at all.json")
        let summary = try spool.runRound()
        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/hook")
        #expect(request.body == Array(body.utf8))
        #expect(request.header("content-type") == "application/json")
        #expect(request.header("idempotency-key") == "w-1")
        #expect(request.header("authorization") == "Bearer t0k3n")
        #expect(request.header("x-tenant") == "acme")
        #expect(request.header("courier-device") == "test-device")
        #expect(request.header("courier-session") == summary.round.value)
        #expect(request.header("user-agent") == "courier/\(CourierVersion.current)")
        #expect(request.header("expect") == nil)
        #expect(try spool.ledger().allSatisfy { $0.round == summary.round.value })
    }

    @Test func signedRequestsVerify() throws {
        let secret = WebhookSigner.decodeSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!
        let server = try LoopbackServer(status: 204)
        let spool = try TemporarySpool(subscribers: [
            Subscriber(name: SubscriberName("alpha")!, url: server.url, signingSecret: secret)
        ])
        try spool.dropRecord(id: "signed-1")
        try spool.runRound()
        let request = try #require(server.requests.first)
        #expect(request.header("webhook-id") == "signed-1")
        let stamp = try #require(Int64(request.header("webhook-timestamp") ?? ""))
        let signature = try #require(request.header("webhook-signature"))
        #expect(
            WebhookSigner(secret: secret).verify(
                id: "signed-1", timestamp: stamp, body: request.body, header: signature))
        #expect(!(try spool.ledgerText().contains(signature)))
    }

    @Test func theSinkVerifiesCourierSignatures() throws {
        let secret = WebhookSigner.decodeSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path, signingSecret: secret)
        let server = try HTTPServer(handler: sink.handle)
        server.start()
        defer { server.stop() }
        let url = "http://\(server.address)/records"
        let spool = try TemporarySpool(subscribers: [
            Subscriber(name: SubscriberName("signed")!, url: url, signingSecret: secret),
            Subscriber(name: SubscriberName("unsigned")!, url: url),
        ])
        try spool.dropRecord(id: "s-1")
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["s-1@signed.json"])
        #expect(try spool.names(in: .needsAttention) == ["s-1@unsigned.json"])
        #expect(try spool.ledger().last { $0.subscriber == "unsigned" }?.status == 401)
    }

    @Test func theStandardWebhooksTestVector() {
        let secret = WebhookSigner.decodeSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!
        let signature = WebhookSigner(secret: secret).signature(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Array(#"{"test": 2432232314}"#.utf8))
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func anEchoedTokenNeverReachesTheLedger() throws {
        let server = try LoopbackServer { request, _ in
            .respond(.json(401, #"{"error":"bad token \#(request.header("authorization") ?? "")"}"#))
        }
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url, token: "sekrit-value")
        ])
        try spool.dropRecord(id: "r-1")
        try spool.runRound()
        let ledger = try spool.ledgerText()
        #expect(!ledger.contains("sekrit-value"))
        #expect(ledger.contains("[redacted]"))
    }

    @Test func redirectsAreNotFollowed() throws {
        let target = try LoopbackServer(status: 200)
        let server = try LoopbackServer(status: 307, headers: [("Location", target.url)])
        let (spool, _) = try Self.oneRecordRound(server: server)
        #expect(target.requests.isEmpty)
        #expect(try spool.names(in: .needsAttention) == ["r-1@alpha.json"])
    }

    @Test func endlessAnswersAreCutShort() throws {
        let huge = [UInt8](repeating: UInt8(ascii: "x"), count: 4 << 20)
        let server = try LoopbackServer { _, _ in .respond(HTTPResponse(status: 200, body: huge)) }
        let (spool, _) = try Self.oneRecordRound(server: server)
        #expect(try spool.names(in: .sent) == ["r-1@alpha.json"])
        #expect(try spool.ledger().last?.detail.utf8.count == 200)
    }

    @Test func perSubscriberConcurrencyIsRespected() throws {
        let gate = ConcurrencyGauge()
        let server = try LoopbackServer { _, _ in
            gate.enter()
            // The first requests wait for one another: three in flight at
            // once is then certain if courier allows it, whatever the load.
            gate.awaitPeak(3, within: .seconds(10))
            usleep(10_000)
            gate.leave()
            return .respond(.json(200, "{}"))
        }
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url, concurrency: 3)
        ])
        for index in 0..<24 { try spool.dropRecord(id: "c-\(index)") }
        try spool.runRound()
        #expect(try spool.names(in: .sent).count == 24)
        #expect(gate.peak == 3)
    }

    // MARK: foreground

    @Test func foregroundRetriesThenDelivers() throws {
        let server = try LoopbackServer { _, count in
            count <= 2 ? .respond(.json(503, "{}")) : .respond(.json(201, "{}"))
        }
        let (spool, summary) = try Self.oneRecordRound(server: server, mode: .foreground)
        #expect(try spool.names(in: .sent) == ["r-1@alpha.json"])
        let events = try spool.ledger().filter { $0.subscriber == "alpha" }.map { "\($0.event.rawValue):\($0.attempt)" }
        #expect(events == ["accepted:0", "retry:1", "retry:2", "sent:3"])
        #expect(summary.retries == 2)
    }

    @Test func foregroundGivesUpAfterTheBackoff() throws {
        let server = try LoopbackServer(status: 500)
        let (spool, _) = try Self.oneRecordRound(server: server, mode: .foreground)
        #expect(try spool.names(in: .needsAttention) == ["r-1@alpha.json"])
        #expect(server.requests.count == 3, "one attempt and one per backoff step (two configured)")
        #expect(try spool.ledger().last?.detail.hasPrefix("retries exhausted") == true)
    }

    @Test func foregroundNeverRetriesOtherClientErrors() throws {
        let server = try LoopbackServer(status: 422)
        let (spool, _) = try Self.oneRecordRound(server: server, mode: .foreground)
        #expect(server.requests.count == 1)
        #expect(try spool.names(in: .needsAttention) == ["r-1@alpha.json"])
    }

    @Test func retryAfterIsHonoured() throws {
        let server = try LoopbackServer { _, count in
            count == 1
                ? .respond(HTTPResponse(status: 429, headers: [("Retry-After", "1")], body: []))
                : .respond(.json(200, "{}"))
        }
        let started = MonotonicInstant.now()
        let (spool, _) = try Self.oneRecordRound(server: server, mode: .foreground)
        #expect(MonotonicInstant.now() - started >= .seconds(1), "Retry-After: 1 outweighs a 20 ms backoff")
        #expect(try spool.names(in: .sent) == ["r-1@alpha.json"])
    }

    @Test func oneSlowItemDoesNotHoldUpTheOthers() throws {
        // Whichever item the server sees first fails twice: with one slot,
        // a round that waited on its retries would send nothing else meanwhile.
        let first = Locked<String?>(nil)
        let server = try LoopbackServer { request, count in
            let key = request.header("idempotency-key") ?? ""
            let slow = first.withLock { first -> String in
                if first == nil { first = key }
                return first ?? key
            }
            return slow == key && count <= 2 ? .respond(.json(503, "{}")) : .respond(.json(200, "{}"))
        }
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url, concurrency: 1)
        ])
        // Long enough for ten requests on a loaded machine under a sanitizer
        // (300 ms was not: ASan saw the retry after seven).
        spool.configuration.backoff = [.milliseconds(1500), .milliseconds(300)]
        for index in 0..<11 { try spool.dropRecord(id: "item-\(index)") }
        try spool.runRound(.foreground)
        #expect(try spool.names(in: .sent).count == 11)
        let order = server.requests.compactMap { $0.header("idempotency-key") }
        let slow = try #require(order.first)
        #expect(order.filter { $0 == slow }.count == 3)
        // All ten others went out before the slow item's second attempt.
        let secondSlow = try #require(order.indices.filter { order[$0] == slow }.dropFirst().first)
        #expect(secondSlow == 11, "order was \(order)")
    }
}

/// Counts how many handlers run at once.
final class ConcurrencyGauge: Sendable {
    private let counts = Locked((current: 0, peak: 0))

    var peak: Int { counts.withLock { $0.peak } }

    func enter() {
        counts.withLock { counts in
            counts.current += 1
            counts.peak = max(counts.peak, counts.current)
        }
    }

    func leave() {
        counts.withLock { $0.current -= 1 }
    }

    /// Waits until `peak` handlers have been in at once, or `timeout` passed.
    func awaitPeak(_ peak: Int, within timeout: Duration) {
        let deadline = MonotonicInstant.now() + timeout
        while self.peak < peak && MonotonicInstant.now() < deadline { usleep(1_000) }
    }
}
