@testable import CourierPosix
@testable import CourierSupport
@testable import CourierSpool
@testable import CourierRecords
@testable import CourierConfig
@testable import CourierTransport
@testable import CourierRound
@testable import CourierCatalog
@testable import CourierSink
@testable import CourierOperations
import Foundation
import Glibc
import Testing

/// `courier sink` as a person starts it, with its server limit.
@Suite(.tags(.integration)) struct SinkCommandTests {
    @Test("courier sink --max-connections caps the connections it serves")
    func maxConnections() throws {
        let directory = TemporaryDirectory("sink-cli")
        let probe = try HTTPServer { _ in .reset }
        let port = probe.port
        probe.stop()
        let sink = try CourierBinary.locate().start([
            "sink", "--listen", "127.0.0.1:\(port)", "--dir", directory.path, "--max-connections", "1",
        ])
        sink.standardError = FileHandle.nullDevice
        try sink.run()
        defer {
            sink.terminate()
            sink.waitUntilExit()
        }
        var holder: RawClient?
        for _ in 0..<100 where holder == nil {
            holder = try? RawClient(port: port)
            if holder == nil { usleep(20_000) }
        }
        #expect(holder != nil, "the sink did not start listening")
        // The holder's connection is being served once its first request is.
        holder?.send(HTTPServerLimitTests.record("first", close: false))
        #expect(holder?.answer(within: .seconds(2)).hasPrefix("HTTP/1.1 201 ") == true)
        let late = try RawClient(port: port)
        late.send(HTTPServerLimitTests.record("late"))
        let answer = late.answer(within: .seconds(2))
        #expect(answer.hasPrefix("HTTP/1.1 503 "), "\(answer.prefix(60))")
    }

    @Test(
        "courier sink refuses a connection limit that is not a number from 1 to 10000",
        arguments: ["0", "-1", "x", "10001"])
    func badMaxConnections(value: String) throws {
        let directory = TemporaryDirectory("sink-cli")
        let result = try CourierBinary.locate().run([
            "sink", "--listen", "127.0.0.1:1", "--dir", directory.path, "--max-connections", value,
        ])
        #expect(result.status == 64, "\(result.error)")
        #expect(result.error.contains("--max-connections"))
    }
}
