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

/// SinkTests on the wire: the sink listening on loopback.
@Suite(.tags(.integration)) struct SinkIntegrationTests {
    @Test func garbageOnTheWireNeverCrashesIt() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        let server = try HTTPServer(bodyLimit: 1024, handler: sink.handle)
        server.start()
        defer { server.stop() }
        let cases: [[UInt8]] = [
            Array("GARBAGE\r\n\r\n".utf8),
            Array("POST /x HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n".utf8),
            Array("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8),
            Array("POST /x HTTP/1.1\r\n\r\n".utf8),
            [0xFF, 0xFE, 0x00, 0x0D, 0x0A, 0x0D, 0x0A],
            Array("POST /x HTTP/1.1\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 70_000),
        ]
        let expected = [400, 413, 501, 411, 400, 431]
        for (bytes, status) in zip(cases, expected) {
            let answer = try SinkTests.exchange(bytes, port: server.port)
            #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(answer.prefix(40))")
        }
        // Still serving after all that.
        let ok = try SinkTests.exchange(
            Array(
                "POST /x HTTP/1.1\r\nIdempotency-Key: fine\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{\"a\":1}"
                    .utf8),
            port: server.port)
        #expect(ok.hasPrefix("HTTP/1.1 201 "))
    }
}
