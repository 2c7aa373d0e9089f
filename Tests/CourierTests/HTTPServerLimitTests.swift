import Foundation
import Glibc
import Testing

@testable import CourierCore

/// The sink is a server and behaves like one: a bounded number of
/// connections, deadlines that do not restart per byte, and a cap on the
/// bytes it buffers for all connections together.
@Suite struct HTTPServerLimitTests {
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
        #expect(MonotonicInstant.now() - started < .seconds(1))
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
}
