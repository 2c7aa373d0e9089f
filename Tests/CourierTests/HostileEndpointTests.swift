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

/// Endpoints that misbehave: courier classifies, never hangs, never crashes.
/// (TLS endpoints it cannot verify are in Integration/TLSIntegrationTests.swift.)
@Suite struct HostileEndpointTests {
    static func round(
        _ behaviour: @escaping @Sendable (HTTPRequest, Int) -> HTTPServerAction, timeout: Duration = .seconds(2)
    )
        throws -> (TemporarySpool, LoopbackServer, Duration)
    {
        let server = try LoopbackServer(behaviour)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        spool.configuration.backgroundTimeout = timeout
        try spool.dropRecord(id: "h-1")
        let started = MonotonicInstant.now()
        try spool.runRound()
        return (spool, server, MonotonicInstant.now() - started)
    }

    @Test func aSlowDripAnswerTimesOut() throws {
        // The whole answer takes 14 s to drip; the timeout is 0.5 s. The
        // round must end long before the answer would have: 6 s leaves a
        // loaded machine (or a sanitizer) 5.5 s for the round itself.
        let (spool, _, took) = try Self.round(
            { _, _ in
                .drip(
                    Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".utf8) + [UInt8](repeating: 0x61, count: 100),
                    every: .milliseconds(100))
            }, timeout: .milliseconds(500))
        #expect(try spool.names(in: .needsAttention) == ["h-1@alpha.json"])
        #expect(try spool.ledger().last?.detail.lowercased().contains("timed out") == true)
        #expect(took < .seconds(6))
    }

    @Test func aResetMidAnswerNeedsAttention() throws {
        let (spool, _, _) = try Self.round { _, _ in .partialThenReset(Array("HTTP/1.1 200 OK\r\nContent-Le".utf8)) }
        #expect(try spool.names(in: .needsAttention) == ["h-1@alpha.json"])
        #expect(try spool.ledger().last?.status == 0)
    }

    @Test func aBodyCutShortNeedsAttention() throws {
        let (spool, _, _) = try Self.round { _, _ in
            .partialThenReset(Array("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhalf".utf8))
        }
        #expect(
            try spool.names(in: .needsAttention) == ["h-1@alpha.json"], "a 200 whose body never arrived is no delivery")
    }

    @Test(arguments: [
        "HTTP/1.1 abc OK\r\n\r\n", "HTTP/9.9 200\r\n\r\n", "\r\n\r\n", "HTTP/1.1 999999999999 X\r\n\r\n",
        "ICY 200 OK\r\n\r\n",
    ])
    func garbageStatusLinesNeedAttention(answer: String) throws {
        let (spool, _, _) = try Self.round { _, _ in .raw(Array(answer.utf8)) }
        #expect(try spool.names(in: .needsAttention) == ["h-1@alpha.json"])
    }

    @Test func tenThousandHeadersAreSurvived() throws {
        var head = "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n"
        for index in 0..<10_000 { head += "X-Header-\(index): value \(index)\r\n" }
        let answer = Array((head + "\r\n{}").utf8)
        let (spool, _, _) = try Self.round { _, _ in .raw(answer) }
        // curl caps the header block; either way the round finishes and says what happened.
        #expect(try spool.placements()["h-1@alpha.json"]?.count == 1)
        #expect(try spool.names(in: .sending).isEmpty)
    }
}
