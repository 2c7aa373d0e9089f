import Foundation
import Glibc
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// The sink is a server and behaves like one: a bounded number of
/// connections, deadlines that do not restart per byte, and a cap on the
/// bytes it buffers for all connections together.
@Suite(.tags(.integration)) struct HTTPServerLimitTests {
    /// A sink behind a server with these limits; keep the directory as long
    /// as the server.
    static func server(_ limits: HTTPServerLimits) throws -> (HTTPServer, TemporaryDirectory) {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        let server = try HTTPServer(limits: limits, handler: sink.handle)
        server.start()
        return (server, directory)
    }

    static func record(_ key: String, close: Bool = true) -> String {
        "POST /records HTTP/1.1\r\nHost: a\r\nIdempotency-Key: \(key)\r\nContent-Length: 7\r\n"
            + (close ? "Connection: close\r\n" : "") + "\r\n{\"a\":1}"
    }

    /// Waits until `condition` holds, up to `timeout`.
    static func eventually(_ timeout: Duration, _ condition: () -> Bool) -> Bool {
        let deadline = MonotonicInstant.now() + timeout
        while MonotonicInstant.now() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    @Test("a connection past the limit is answered 503 with Retry-After at once, and served once a slot frees")
    func connectionLimit() throws {
        let (server, directory) = try Self.server(HTTPServerLimits(maxConnections: 2))
        defer { withExtendedLifetime(directory) { server.stop() } }
        let holders = try (0..<2).map { _ in try RawClient(port: server.port) }
        #expect(Self.eventually(.seconds(2)) { server.openConnections == 2 })
        let late = try RawClient(port: server.port)
        late.send(Self.record("late"))
        let started = MonotonicInstant.now()
        let answer = late.answer(within: .seconds(3))
        #expect(answer.hasPrefix("HTTP/1.1 503 "), "\(answer.prefix(80))")
        #expect(answer.contains("Retry-After: 1\r\n"))
        // At once, not after a header deadline (10 s): room for a loaded machine.
        #expect(MonotonicInstant.now() - started < .seconds(3))
        #expect(server.openConnections == 2)
        // One holder leaves: the next client is served.
        holders[0].hangUp()
        #expect(Self.eventually(.seconds(2)) { server.openConnections == 1 })
        let next = try RawClient(port: server.port)
        next.send(Self.record("next"))
        let served = next.answer(within: .seconds(3))
        #expect(served.hasPrefix("HTTP/1.1 201 "), "\(served.prefix(80))")
        withExtendedLifetime(holders) {}
    }

    static let quick = HTTPServerLimits(
        headerDeadline: .milliseconds(300), bodyDeadline: .milliseconds(600), sendDeadline: .milliseconds(300))

    /// Sends `bytes` one at a time, `every` apart, until the server answers
    /// or hangs up; what it said and how long after connecting.
    static func drip(_ bytes: String, every: Duration, to client: RawClient) -> (text: String, after: Duration) {
        let started = MonotonicInstant.now()
        for byte in bytes.utf8 {
            guard client.send([byte]) else { break }
            let (text, closed) = client.receive(for: every)
            if closed || !text.isEmpty {
                return (text + client.receive(for: .milliseconds(100)).text, MonotonicInstant.now() - started)
            }
        }
        let (text, _) = client.receive(for: .seconds(2))
        return (text, MonotonicInstant.now() - started)
    }

    @Test("a head sent a byte at a time is cut off at the header deadline with 408, not kept alive per byte")
    func slowHead() throws {
        let (server, directory) = try Self.server(Self.quick)
        defer { withExtendedLifetime(directory) { server.stop() } }
        let client = try RawClient(port: server.port)
        let head = "POST /records HTTP/1.1\r\nHost: a\r\n" + String(repeating: "X-Padding: slow\r\n", count: 20)
        let (text, after) = Self.drip(head, every: .milliseconds(20), to: client)
        #expect(text.hasPrefix("HTTP/1.1 408 "), "\(text.prefix(60))")
        // At the 300 ms deadline, not at the end of the 8 s drip: room for a loaded machine.
        #expect(after < .seconds(4), "\(after)")
        #expect(Self.eventually(.seconds(1)) { server.openConnections == 0 })
    }

    @Test("a body sent a byte at a time is cut off at the body deadline, counted from the request's start")
    func slowBody() throws {
        let (server, directory) = try Self.server(Self.quick)
        defer { withExtendedLifetime(directory) { server.stop() } }
        let client = try RawClient(port: server.port)
        client.send("POST /records HTTP/1.1\r\nHost: a\r\nIdempotency-Key: k\r\nContent-Length: 400\r\n\r\n")
        // A body that would be stored, had it come in time.
        let body = #"{"a":""# + String(repeating: "x", count: 392) + #""}"#
        let (text, after) = Self.drip(body, every: .milliseconds(20), to: client)
        #expect(text.hasPrefix("HTTP/1.1 408 "), "\(text.prefix(60))")
        // Not before the 600 ms body deadline, and long before the 8 s drip ends.
        #expect(after >= .milliseconds(500) && after < .seconds(4), "\(after)")
    }

    @Test("an idle connection is closed at the header deadline without an answer")
    func idleConnection() throws {
        let (server, directory) = try Self.server(Self.quick)
        defer { withExtendedLifetime(directory) { server.stop() } }
        let client = try RawClient(port: server.port)
        let (text, closed) = client.receive(for: .seconds(2))
        #expect(closed)
        #expect(text.isEmpty)
    }

    @Test("each request on a kept-alive connection has its own deadlines")
    func keepAliveRestartsTheClock() throws {
        // Six requests 400 ms apart outlive one request's body deadline (2 s)
        // twice over; each gap leaves 600 ms to the header deadline, for a
        // loaded machine (150 ms gaps under a 300 ms deadline did not).
        let limits = HTTPServerLimits(
            headerDeadline: .seconds(1), bodyDeadline: .seconds(2), sendDeadline: .seconds(1))
        let (server, directory) = try Self.server(limits)
        defer { withExtendedLifetime(directory) { server.stop() } }
        let client = try RawClient(port: server.port)
        for index in 0..<6 {
            usleep(400_000)
            client.send(Self.record("alive-\(index)", close: false))
            let answer = client.answer(within: .seconds(2))
            #expect(answer.hasPrefix("HTTP/1.1 201 "), "request \(index): \(answer.prefix(60))")
        }
    }

    @Test("a client that does not read its answer is hung up on at the send deadline")
    func unreadAnswer() throws {
        let big = HTTPResponse(status: 200, body: [UInt8](repeating: 65, count: 32 << 20))
        let server = try HTTPServer(limits: Self.quick) { _ in .respond(big) }
        server.start()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("GET /big HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(Self.eventually(.seconds(1)) { server.openConnections == 1 })
        #expect(Self.eventually(.seconds(2)) { server.openConnections == 0 })
        withExtendedLifetime(client) {}
    }
}
