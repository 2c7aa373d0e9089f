import CCurl
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierSink
@testable import CourierTransport

/// `HTTPClient` sets a handle's fixed rules once, when it makes the handle,
/// and a request sets only its own URL, body, headers and transfer: every
/// rule must still hold on the second request over the same handle, and
/// nothing of the first request may leak into the second.
@Suite(.tags(.integration)) struct ReusedHandleTests {
    /// The one response of the request in flight, or a failure after 10 s.
    static func response(of client: HTTPClient) throws -> DeliveryResponse {
        let deadline = MonotonicInstant.now() + .seconds(10)
        while MonotonicInstant.now() < deadline {
            if let done = try client.collect(wait: .milliseconds(100)).first { return done.response }
        }
        throw TestFailure("no response within 10 s")
    }

    static func request(_ key: String, to url: String, caFile: String? = nil) throws -> DeliveryRequest {
        let subscriber = Subscriber(
            name: try TemporarySpool.subscriberName("alpha"), url: url, caFile: caFile)
        return DeliveryRequest(key: key, body: Array(#"{"id":"\#(key)"}"#.utf8), subscriber: subscriber, url: url)
    }

    static func headers(key: String) throws -> HeaderLines {
        HeaderLines([
            HTTPHeaderField(constant: "Content-Type", "application/json"),
            try HTTPHeaderField(name: "Idempotency-Key", value: key), HTTPHeaderField(constant: "Expect", ""),
        ])
    }

    /// One handle, one request after another: a first that is answered, then
    /// the ones that need a rule set only when the handle was made.
    static func afterOneAnswered(
        _ client: HTTPClient, _ server: LoopbackServer
    ) throws {
        try client.start(try request("first", to: server.url), headers: try headers(key: "first"), tag: 1)
        let first = try response(of: client)
        #expect(first.status == 200)
        #expect(first.answer == Array("one".utf8))
        #expect(client.idleCount == 1, "the handle of the first request is kept for the next")
    }

    @Test("the request timeout and curl's detailed error still hold on a reused handle")
    func timeoutHoldsOnReuse() throws {
        let answering = try LoopbackServer(status: 200, body: "one")
        let stalling = try LoopbackServer { _, _ in .stall(.seconds(5)) }
        let client = try HTTPClient(timeout: .seconds(1))
        try Self.afterOneAnswered(client, answering)
        let started = MonotonicInstant.now()
        try client.start(try Self.request("second", to: stalling.url), headers: try Self.headers(key: "second"), tag: 2)
        #expect(client.idleCount == 0, "the second request went over the first one's handle")
        let second = try Self.response(of: client)
        let elapsed = MonotonicInstant.now() - started
        let error = try #require(second.error, "a stalled answer ended without the timeout")
        #expect(error.isTimeout)
        #expect(elapsed < .seconds(4), "took \(elapsed): the 1 s timeout was lost")
        // The error buffer's words, not curl_easy_strerror's "Timeout was reached".
        #expect(error.message.contains("milliseconds"), "\(error.message)")
        #expect(second.status == 0)
        #expect(stalling.requests.first?.header("idempotency-key") == "second")
    }

    @Test("a reused handle still refuses every protocol but http and https")
    func protocolsHoldOnReuse() throws {
        let answering = try LoopbackServer(status: 200, body: "one")
        let client = try HTTPClient(timeout: .seconds(5))
        try Self.afterOneAnswered(client, answering)
        let local = "file:///etc/hostname"
        try client.start(try Self.request("second", to: local), headers: try Self.headers(key: "second"), tag: 2)
        let second = try Self.response(of: client)
        #expect(second.error?.code == CURLE_UNSUPPORTED_PROTOCOL.rawValue, "\(String(describing: second.error))")
        #expect(second.answer.isEmpty, "a file was read")
    }

    @Test("the second request carries its own headers and body, not the first one's")
    func requestPartsAreEachRequestsOwn() throws {
        let server = try LoopbackServer(status: 200, body: "one")
        let client = try HTTPClient(timeout: .seconds(5))
        try Self.afterOneAnswered(client, server)
        try client.start(try Self.request("second", to: server.url), headers: try Self.headers(key: "second"), tag: 2)
        let second = try Self.response(of: client)
        #expect(second.status == 200)
        let requests = server.requests
        #expect(requests.count == 2)
        #expect(requests.last?.header("idempotency-key") == "second")
        #expect(requests.last?.body == Array(#"{"id":"second"}"#.utf8))
        #expect(requests.last?.header("expect") == nil, "curl sent an Expect header")
        #expect(requests.last?.method == "POST")
    }

    @Test("a handle taken over for another CA file is set up again, timeout included")
    func anotherCAFileSetsTheHandleUpAgain() throws {
        let answering = try LoopbackServer(status: 200, body: "one")
        let stalling = try LoopbackServer { _, _ in .stall(.seconds(5)) }
        let client = try HTTPClient(timeout: .seconds(1))
        try Self.afterOneAnswered(client, answering)
        let started = MonotonicInstant.now()
        // A CA file plays no part in plain http: the request reaches the server.
        let request = try Self.request("second", to: stalling.url, caFile: "/nonexistent/ca.pem")
        try client.start(request, headers: try Self.headers(key: "second"), tag: 2)
        #expect(client.idleCount == 0, "the first request's handle was taken over")
        let second = try Self.response(of: client)
        #expect(second.error?.isTimeout == true, "\(String(describing: second.error))")
        #expect(MonotonicInstant.now() - started < .seconds(4))
        #expect(stalling.requests.first?.header("idempotency-key") == "second")
    }
}
