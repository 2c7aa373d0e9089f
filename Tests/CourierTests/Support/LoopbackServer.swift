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

/// The tests' HTTP server on 127.0.0.1: answers by a script and records
/// every request it got, in order.
final class LoopbackServer: Sendable {
    let server: HTTPServer
    /// Shared between the server's threads and the test.
    private let log = Locked<[HTTPRequest]>([])

    init(
        limits: HTTPServerLimits = HTTPServerLimits(),
        _ behaviour: @escaping @Sendable (HTTPRequest, Int) -> HTTPServerAction
    ) throws {
        let log = self.log
        server = try HTTPServer(limits: limits) { request in
            let count = log.withLock { requests -> Int in
                requests.append(request)
                return requests.filter { $0.header("idempotency-key") == request.header("idempotency-key") }.count
            }
            return behaviour(request, count)
        }
        server.start()
    }

    /// A server that answers every request with `status`.
    convenience init(
        status: Int, body: String = "{}", headers: [(name: String, value: String)] = [],
        limits: HTTPServerLimits = HTTPServerLimits()
    ) throws {
        try self.init(limits: limits) { _, _ in
            .respond(HTTPResponse(status: status, headers: headers, body: Array(body.utf8)))
        }
    }

    /// A server that answers as `sink` does and records what it got.
    convenience init(forwardingTo sink: Sink) throws {
        try self.init { request, _ in
            if case .respond(let response) = sink.handle(request) { return .respond(response) }
            return .reset
        }
    }

    deinit { server.stop() }

    var url: String { "http://\(server.address)/hook" }

    var requests: [HTTPRequest] { log.withLock { $0 } }

    /// How many requests carried each Idempotency-Key.
    var countsByKey: [String: Int] {
        var counts: [String: Int] = [:]
        for request in requests { counts[request.header("idempotency-key") ?? "-", default: 0] += 1 }
        return counts
    }
}
