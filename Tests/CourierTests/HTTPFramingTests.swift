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

/// RFC 9112's framing rules, checked on the wire: a request whose length or
/// header lines a proxy in front could read differently is refused, and the
/// connection closed (request smuggling needs exactly such disagreements).
@Suite struct HTTPFramingTests {
    static let valid = "POST /x HTTP/1.1\r\nHost: a\r\nIdempotency-Key: k\r\nContent-Length: 7\r\n"

    @Test(
        "a request with ambiguous framing or header lines is refused",
        arguments: [
            ("Content-Length: +7", 400),
            ("Content-Length: -7", 400),
            ("Content-Length: 0x7", 400),
            ("Content-Length: 7, 7", 400),
            ("Content-Length: 7 7", 400),
            ("Content-Length: \u{0667}", 400),
            ("Content-Length : 7", 400),
            ("Content-Length\t: 7", 400),
            ("Content-Length: 7\r\nContent-Length: 8", 400),
            ("Content-Length: 7\r\nContent-Length: 7", 400),
            ("Content-Length: 7\r\nContent-length: 7", 400),
            ("Transfer-Encoding: chunked", 501),
            ("Transfer-Encoding: gzip", 400),
            ("Transfer-Encoding: chunked\r\nContent-Length: 7", 400),
            ("X-Folded: a\r\n b", 400),
            ("X-Folded: a\r\n\tb", 400),
            (" X-Leading: a", 400),
            ("X(Bad): a", 400),
            ("X Bad: a", 400),
            (": no name", 400),
            ("X-Control: a\u{01}b", 400),
            ("X-Bare-LF: a\nContent-Length: 99", 400),
            ("X-Bare-CR: a\rb", 400),
            ("X-Nul: a\u{00}b", 400),
        ])
    func ambiguousFraming(extra: String, status: Int) throws {
        let (server, directory) = try Self.server()
        defer { withExtendedLifetime(directory) { server.stop() } }
        let head = "POST /x HTTP/1.1\r\nHost: a\r\nIdempotency-Key: k\r\n\(extra)\r\n"
        let lengthGiven = extra.lowercased().contains("content-length") || extra.contains("Transfer-Encoding")
        let request = head + (lengthGiven ? "" : "Content-Length: 7\r\n") + "\r\n" + #"{"a":1}"#
        let answer = try SinkTests.exchange(Array(request.utf8), port: server.port)
        #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(answer.prefix(60))")
        #expect(answer.contains("Connection: close"))
    }

    @Test(
        "a malformed request line is refused",
        arguments: [
            ("POST /x HTTP/1.1x", 400), ("POST /x HTTP/1.", 400), ("POST /x HTTP/2.0", 505), ("POST /x HTTP/1.1 ", 400),
            ("POST  /x HTTP/1.1", 400), ("POST x HTTP/1.1", 400), ("post /x HTTP/1.1", 400),
            ("POST /x\u{01} HTTP/1.1", 400), ("P(ST /x HTTP/1.1", 400),
        ])
    func malformedRequestLine(line: String, status: Int) throws {
        let (server, directory) = try Self.server()
        defer { withExtendedLifetime(directory) { server.stop() } }
        let request = line + "\r\nHost: a\r\nIdempotency-Key: k\r\nContent-Length: 7\r\n\r\n" + #"{"a":1}"#
        let answer = try SinkTests.exchange(Array(request.utf8), port: server.port)
        #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(answer.prefix(60))")
    }

    /// A sink's server; keep the directory as long as the server.
    static func server() throws -> (HTTPServer, TemporaryDirectory) {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        let server = try HTTPServer(bodyLimit: 1024, handler: sink.handle)
        server.start()
        return (server, directory)
    }

    /// RFC 9110 §15's phrases for every status the sink and its server send.
    @Test(
        "every status the sink sends has its standard reason phrase",
        arguments: [
            (200, "OK"), (201, "Created"), (204, "No Content"), (400, "Bad Request"), (401, "Unauthorized"),
            (404, "Not Found"), (405, "Method Not Allowed"), (408, "Request Timeout"), (411, "Length Required"),
            (412, "Precondition Failed"), (413, "Content Too Large"), (415, "Unsupported Media Type"),
            (422, "Unprocessable Content"), (431, "Request Header Fields Too Large"),
            (500, "Internal Server Error"), (501, "Not Implemented"), (503, "Service Unavailable"),
            (505, "HTTP Version Not Supported"),
        ])
    func reasonPhrases(status: Int, phrase: String) {
        #expect(HTTPResponse.reason(status) == phrase)
        let line = String(decoding: HTTPResponse(status: status).serialized(keepAlive: true), as: UTF8.self)
        #expect(line.hasPrefix("HTTP/1.1 \(status) \(phrase)\r\n"))
    }
}
