import CCurl
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierSink
@testable import CourierTransport

/// `HTTPClient` hands libcurl each URL parsed once (`CurlURL`, CURLOPT_CURLU)
/// instead of the string: every request must still go to its own URL, and
/// one libcurl cannot parse must still fail as the string always did.
@Suite(.tags(.integration)) struct ParsedURLTests {
    /// The responses of `count` requests in flight, by tag, or a failure after 10 s.
    static func responses(of client: HTTPClient, count: Int) throws -> [Int: DeliveryResponse] {
        var done: [Int: DeliveryResponse] = [:]
        let deadline = MonotonicInstant.now() + .seconds(10)
        while done.count < count && MonotonicInstant.now() < deadline {
            for (tag, response) in try client.collect(wait: .milliseconds(100)) { done[tag] = response }
        }
        guard done.count == count else { throw TestFailure("\(done.count) of \(count) responses within 10 s") }
        return done
    }

    static func start(_ client: HTTPClient, _ key: String, to url: String, tag: Int) throws {
        try client.start(
            try ReusedHandleTests.request(key, to: url), headers: try ReusedHandleTests.headers(key: key), tag: tag)
    }

    @Test("a URL curl cannot parse fails its request on a handle that sent to a parsed URL before")
    func unparsableURLFailsAfterAParsedOne() throws {
        let server = try LoopbackServer(status: 200, body: "one")
        let client = try HTTPClient(timeout: .seconds(5))
        try ReusedHandleTests.afterOneAnswered(client, server)
        let badPort = server.url.replacingOccurrences(of: "\(server.server.address)", with: "127.0.0.1:99999")
        try Self.start(client, "second", to: badPort, tag: 2)
        let second = try #require(try Self.responses(of: client, count: 1)[2])
        #expect(second.error?.code == CURLE_URL_MALFORMAT.rawValue, "\(String(describing: second.error))")
        #expect(second.status == 0)
        #expect(server.requests.count == 1, "the second request went to the first one's URL")
    }

    /// Found by an attack: the unparsable URL's string stayed set on the
    /// handle, and libcurl retries a request whose reused connection died
    /// from the string, not the parsed URL. The retry failed as "could not
    /// be parsed", which courier takes as refused, never to be retried.
    @Test("a request after an unparsable URL on the same handle is retried on a new connection to its own URL")
    func retryAfterUnparsableURLUsesItsOwnURL() throws {
        let server = try LoopbackServer { request, count in
            // The third request's first try: the kept-alive connection is closed, unanswered.
            request.header("idempotency-key") == "third" && count == 1
                ? .stall(.zero) : .respond(HTTPResponse(status: 200, headers: [], body: Array("one".utf8)))
        }
        let client = try HTTPClient(timeout: .seconds(5))
        try ReusedHandleTests.afterOneAnswered(client, server)
        let badPort = server.url.replacingOccurrences(of: "\(server.server.address)", with: "127.0.0.1:99999")
        try Self.start(client, "second", to: badPort, tag: 2)
        #expect(try Self.responses(of: client, count: 1)[2]?.error?.code == CURLE_URL_MALFORMAT.rawValue)
        try Self.start(client, "third", to: server.url, tag: 3)
        let third = try #require(try Self.responses(of: client, count: 1)[3])
        #expect(third.error == nil, "\(String(describing: third.error))")
        #expect(third.status == 200)
        #expect(server.requests.filter { $0.header("idempotency-key") == "third" }.map(\.target) == ["/hook", "/hook"])
    }

    @Test("requests to other servers, paths and queries over one client each go to their own URL")
    func eachRequestGoesToItsOwnURL() throws {
        let first = try LoopbackServer(status: 200)
        let second = try LoopbackServer(status: 200)
        let client = try HTTPClient(timeout: .seconds(5))
        let sent = [(first, "/a"), (second, "/b?x=1&y=%20"), (first, "/a"), (second, "/c/d"), (first, "/b?x=1&y=%20")]
        for (index, (server, target)) in sent.enumerated() {
            try Self.start(client, "k\(index)", to: "http://\(server.server.address)\(target)", tag: index)
            // One at a time, so the handles are reused across URLs.
            #expect(try Self.responses(of: client, count: 1)[index]?.status == 200)
        }
        func seen(by server: LoopbackServer) -> [String] {
            server.requests.map { "\($0.header("idempotency-key") ?? "") \($0.target)" }
        }
        #expect(seen(by: first) == ["k0 /a", "k2 /a", "k4 /b?x=1&y=%20"])
        #expect(seen(by: second) == ["k1 /b?x=1&y=%20", "k3 /c/d"])
    }

    @Test("more URLs than the client keeps parsed, all in flight at once, each reach their own path")
    func urlsBeyondTheLimitInFlight() throws {
        let count = HTTPClient.parsedURLLimit + 6
        let server = try LoopbackServer(status: 200, limits: HTTPServerLimits(maxConnections: count))
        let client = try HTTPClient(timeout: .seconds(10))
        for index in 0..<count {
            try Self.start(client, "k\(index)", to: "http://\(server.server.address)/p\(index)", tag: index)
        }
        let done = try Self.responses(of: client, count: count)
        #expect(done.values.allSatisfy { $0.status == 200 })
        let targets = Dictionary(
            server.requests.map { ($0.header("idempotency-key") ?? "", $0.target) }, uniquingKeysWith: { $1 })
        #expect(targets.count == count)
        #expect((0..<count).allSatisfy { targets["k\($0)"] == "/p\($0)" })
    }
}
