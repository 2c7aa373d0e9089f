import Foundation
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

/// HTTPFramingTests through the sink listening on loopback.
@Suite(.tags(.integration)) struct HTTPFramingIntegrationTests {
    @Test("a well-framed request is still accepted, with optional spaces around the value")
    func wellFramed() throws {
        let (server, directory) = try HTTPFramingTests.server()
        defer { withExtendedLifetime(directory) { server.stop() } }
        let request =
            HTTPFramingTests.valid.replacingOccurrences(of: ": 7", with: ":  7 \t")
            + "Connection: close\r\n\r\n{\"a\":1}"
        let answer = try SinkTests.exchange(Array(request.utf8), port: server.port)
        #expect(answer.hasPrefix("HTTP/1.1 201 "), "\(answer.prefix(60))")
    }
}
