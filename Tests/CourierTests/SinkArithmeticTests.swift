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

/// Numbers a client or a file controls never reach unchecked Int64
/// arithmetic in the sink: each case here used to trap (a crash of the
/// whole sink from one request).
@Suite struct SinkArithmeticTests {
    static let secret: [UInt8] = Array("0123456789abcdef0123456789abcdef".utf8)

    static func respond(_ sink: Sink, _ request: HTTPRequest) -> HTTPResponse {
        guard case .respond(let response) = sink.handle(request) else { return HTTPResponse(status: 0) }
        return response
    }

    @Test(
        "a hostile webhook-timestamp is refused with 401, not a crash",
        arguments: [
            "-9000000000", "-9223372036854775808", "9223372036854775807", "99999999999999999999", "-1", "+1700000000",
            " 1700000000", "1e9", "",
        ])
    func hostileTimestamp(stamp: String) throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path, signingSecret: Self.secret)
        let request = HTTPRequest(
            method: "POST", target: "/records",
            headers: [
                ("idempotency-key", "k"), ("webhook-id", "k"), ("webhook-timestamp", stamp),
                ("webhook-signature", "v1,AAAA"),
            ],
            body: Array(#"{"a":1}"#.utf8))
        #expect(Self.respond(sink, request).status == 401)
    }

    /// Sets a file's mtime to whole seconds since 1970, beyond what
    /// nanoseconds in an Int64 hold (1677-2262).
    static func setModified(_ path: String, seconds: Int) throws {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else { throw TestFailure("utimensat \(path): \(errno)") }
    }

    @Test(
        "a stored record dated in the year 3000 or 1600 does not crash the key check",
        arguments: [32_503_680_000, -11_676_096_000])
    func storedRecordFarFromNow(seconds: Int) throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        #expect(SinkTests.post(sink, key: "k", body: #"{"a":1}"#).status == 201)
        try Self.setModified(directory.path + "/new/k.json", seconds: seconds)
        // In the future: still seen (a duplicate); in the far past: forgotten.
        let status = SinkTests.post(sink, key: "k", body: #"{"a":1}"#).status
        #expect(status == (seconds > 0 ? 200 : 201))
    }

    @Test("a catalog item dated in the year 3000 does not crash a delta page")
    func catalogItemFarInTheFuture() throws {
        let directory = TemporaryDirectory("sink")
        try FileManager.default.createDirectory(
            atPath: directory.path + "/catalogs/foods", withIntermediateDirectories: true)
        try directory.write(#"{"id":"apple"}"#, to: "catalogs/foods/apple.json")
        try Self.setModified(directory.path + "/catalogs/foods/apple.json", seconds: 32_503_680_000)
        let sink = try Sink(directory: directory.path + "/sink", catalogs: directory.path + "/catalogs")
        let response = Self.respond(
            sink, HTTPRequest(method: "GET", target: "/catalogs/foods/delta?since=0", headers: [], body: []))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains("apple"))
    }

    @Test(
        "a catalog query with numbers past Int64 is refused with 400",
        arguments: [
            "since=99999999999999999999", "cursor=99999999999999999999", "pageSize=99999999999999999999", "since=-1",
            "cursor=9223372036854775807",
        ])
    func catalogQueryPastInt64(query: String) throws {
        let directory = TemporaryDirectory("sink")
        try FileManager.default.createDirectory(
            atPath: directory.path + "/catalogs/foods", withIntermediateDirectories: true)
        try directory.write(#"{"id":"apple"}"#, to: "catalogs/foods/apple.json")
        let sink = try Sink(directory: directory.path + "/sink", catalogs: directory.path + "/catalogs")
        let response = Self.respond(
            sink, HTTPRequest(method: "GET", target: "/catalogs/foods/delta?\(query)", headers: [], body: []))
        // A cursor past the end is an empty last page, not an error.
        #expect(response.status == (query.hasPrefix("cursor=9223") ? 200 : 400))
    }

    @Test("timestamps at the ends of the clock subtract, add and print without trapping")
    func clockEdges() {
        let now = Timestamp.now()
        #expect(now - Timestamp(nanosecondsSinceEpoch: .min) == .nanoseconds(Int64.max))
        #expect(Timestamp(nanosecondsSinceEpoch: .min) - now == .nanoseconds(Int64.min))
        #expect((Timestamp(nanosecondsSinceEpoch: .max) + .seconds(1)).nanosecondsSinceEpoch == .max)
        #expect((Timestamp(nanosecondsSinceEpoch: .min) - .seconds(1)).nanosecondsSinceEpoch == .min)
        #expect(Timestamp(nanosecondsSinceEpoch: .min).secondsSinceEpoch == -9_223_372_037)
        #expect(Timestamp(nanosecondsSinceEpoch: -1).secondsSinceEpoch == -1)
        #expect(Timestamp(nanosecondsSinceEpoch: -1).rfc3339 == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(secondsSinceEpoch: 32_503_680_000, nanoseconds: 5).nanosecondsSinceEpoch == .max)
        #expect(Timestamp(secondsSinceEpoch: 1, nanoseconds: 5).nanosecondsSinceEpoch == 1_000_000_005)
    }

    @Test("a Content-Length near Int.max is refused, not added to the header size")
    func contentLengthNearIntMax() throws {
        let head = Array("POST /x HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n\r\n".utf8)
        #expect(throws: HTTPRequestParser.Problem.bodyTooLarge) {
            try HTTPRequestParser.parse(head, bodyLimit: 8 << 20)
        }
        // Even a server configured without a body limit only waits for more bytes.
        let parsed = try HTTPRequestParser.parse(head, bodyLimit: .max)
        #expect(parsed == nil)
    }
}
