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

/// `courier sink` as a person starts it, with its server limit.
@Suite(.tags(.integration)) struct SinkCommandTests {
    @Test("courier sink --max-connections caps the connections it serves")
    func maxConnections() throws {
        let directory = TemporaryDirectory("sink-cli")
        let (sink, port) = try CourierBinary.locate().startSink(
            ["--dir", directory.path + "/sink", "--max-connections", "1"], errors: directory.path + "/sink.log")
        defer {
            sink.terminate()
            sink.waitUntilExit()
        }
        let holder = try RawClient(port: port)
        // The holder's connection is being served once its first request is.
        holder.send(HTTPServerLimitTests.record("first", close: false))
        #expect(holder.answer(within: .seconds(2)).hasPrefix("HTTP/1.1 201 "))
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
