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

/// Slow uploads cannot take the sink's memory: every request's bytes are
/// reserved against one cap for all connections before they are read.
@Suite(.tags(.integration)) struct HTTPServerBudgetTests {
    struct Scenario: Sendable, CustomTestStringConvertible {
        let uploads: Int
        let contentLength: Int
        let limits: HTTPServerLimits
        var testDescription: String { "\(uploads) uploads of \(contentLength) bytes, cap \(limits.bufferedBytesLimit)" }
    }

    @Test(
        "slow uploads past the buffered-bytes cap get 503, the cap holds, and a normal request is still answered at once",
        arguments: [
            // The case: sixteen slow 8 MiB uploads, default limits.
            Scenario(uploads: 16, contentLength: 8 << 20, limits: HTTPServerLimits()),
            Scenario(
                uploads: 32, contentLength: 300_000,
                limits: HTTPServerLimits(bodyLimit: 512 << 10, bufferedBytesLimit: 1 << 20)),
        ])
    func slowUploads(scenario: Scenario) throws {
        let (server, directory) = try HTTPServerLimitTests.server(scenario.limits)
        defer { withExtendedLifetime(directory) { server.stop() } }
        let cap = scenario.limits.bufferedBytesLimit
        var uploads: [RawClient] = []
        for index in 0..<scenario.uploads {
            let client = try RawClient(port: server.port)
            client.send(
                "POST /records HTTP/1.1\r\nHost: a\r\nIdempotency-Key: up-\(index)\r\n"
                    + "Content-Length: \(scenario.contentLength)\r\n\r\n{\"a\":\"")
            uploads.append(client)
        }
        // Each admitted upload holds its whole announced request; the
        // others are told 503 and closed.
        let admitted = cap / scenario.contentLength
        let answers = Self.settle(uploads, server: server, each: scenario.contentLength)
        let refused = answers.filter { $0.hasPrefix("HTTP/1.1 503 ") && $0.contains("Retry-After: 1\r\n") }.count
        #expect(refused >= scenario.uploads - admitted, "\(refused) refused")
        #expect(refused < scenario.uploads, "some uploads are still being received")
        #expect(server.bufferedBytes <= cap)
        let started = MonotonicInstant.now()
        let normal = try RawClient(port: server.port)
        normal.send(HTTPServerLimitTests.record("normal"))
        let answer = normal.answer(within: .seconds(2))
        #expect(answer.hasPrefix("HTTP/1.1 201 "), "\(answer.prefix(80))")
        // At once, not after an upload's 30 s deadline: room for a loaded machine.
        #expect(MonotonicInstant.now() - started < .seconds(2))
        #expect(server.peakBufferedBytes <= cap, "peak \(server.peakBufferedBytes) of \(cap)")
        for client in uploads { client.hangUp() }
        #expect(HTTPServerLimitTests.eventually(.seconds(2)) { server.bufferedBytes == 0 })
    }

    /// What each client was told, once the server has decided about all of
    /// them: every client has been answered, or is served and holds its
    /// whole request (`each` bytes) in the budget.
    static func settle(_ clients: [RawClient], server: HTTPServer, each: Int) -> [String] {
        var answers = [String](repeating: "", count: clients.count)
        var closed = [Bool](repeating: false, count: clients.count)
        let deadline = MonotonicInstant.now() + .seconds(3)
        while MonotonicInstant.now() < deadline {
            for (index, client) in clients.enumerated() where !closed[index] {
                let (text, gone) = client.receive(for: .milliseconds(1))
                answers[index] += text
                closed[index] = gone
            }
            let open = closed.filter { !$0 }.count
            if open == server.openConnections, server.bufferedBytes >= open * each { break }
        }
        return answers
    }
}
