import CCurl
import Testing

@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// What a request puts on the wire, byte for byte: the header lines curl is
/// given, in order, the URL and the body. The expectations are literal,
/// written from what courier sent before the request builder kept the
/// constant headers per subscriber and the records' fields from intake, so
/// that any change to how a request is built shows here.
@Suite struct RequestWireTests {
    static let round = RoundID(value: "20261201T000000Z-abcd")
    /// A fixed `webhook-timestamp`: the signature is over it.
    static let now = Timestamp(secondsSinceEpoch: 1_764_547_200)

    static func configuration(_ subscriber: Subscriber) -> Configuration {
        var configuration = Configuration(spool: "/nonexistent", subscribers: [subscriber])
        configuration.deviceID = "phone-7"
        return configuration
    }

    static func item(_ key: String, subscriber: String, _ record: String) throws -> DeliveryItem {
        let entry = try #require(EntryName(fileName: FileName("\(key)@\(subscriber).json")))
        let bytes = Array(record.utf8)
        guard case .success(let parsed) = Record.parse(bytes, maximumSize: .max) else {
            throw TestFailure("\(record) is not a record")
        }
        return DeliveryItem(entry: entry, body: bytes, fields: parsed.outbox)
    }

    /// The request as it goes to curl: the lines of its header list, as the
    /// transport hands them over, then the URL and the body.
    static func wire(
        _ subscriber: Subscriber, _ items: [DeliveryItem], bearer: String? = nil
    ) throws -> (lines: [String], url: String, body: [UInt8]) {
        let builder = RequestBuilder(RequestSettings(configuration(subscriber)), session: round)
        let request = PendingRequest(items: items, subscriber: subscriber, attempt: 1, due: .now())
        guard case .ready(let wire, let headers) = builder.build(request, now: now, bearer: bearer) else {
            throw TestFailure("the request was refused")
        }
        let list = CurlHeaderList(headers)
        var lines: [String] = []
        var node = list.list
        while let current = node {
            lines.append(current.pointee.data.map { String(cString: $0) } ?? "(null)")
            node = current.pointee.next
        }
        return (lines, wire.url, wire.body)
    }

    static let plainRecord = #"{"id":"r1","kind":"sleep","minutes":42}"#

    @Test("a plain subscriber's request carries the fixed headers, the key and the record as it is")
    func plainRequest() throws {
        let subscriber = try TemporarySpool.subscriber(
            "plain", url: "http://127.0.0.1:9/in",
            headers: [try HTTPHeaderField(name: "X-Team", value: "sleep lab")])
        let wire = try Self.wire(subscriber, [try Self.item("r1", subscriber: "plain", Self.plainRecord)])
        #expect(
            wire.lines == [
                "Content-Type: application/json", "Idempotency-Key: r1", "User-Agent: courier/0.1.0",
                "Courier-Device: phone-7", "Courier-Session: 20261201T000000Z-abcd", "Expect:", "X-Team: sleep lab",
            ])
        #expect(wire.url == "http://127.0.0.1:9/in")
        #expect(wire.body == Array(Self.plainRecord.utf8))
    }

    @Test("an update goes with If-Match from its etag, after the subscriber's own headers")
    func updateRequest() throws {
        let record = #"{"id":"u1","kind":"order","op":"UPDATE","entity_id":"E-1","version":7,"etag":"v9"}"#
        let subscriber = try TemporarySpool.subscriber("plain", url: "http://127.0.0.1:9/in")
        let wire = try Self.wire(subscriber, [try Self.item("u1#2", subscriber: "plain", record)])
        #expect(
            wire.lines == [
                "Content-Type: application/json", "Idempotency-Key: u1#2", "User-Agent: courier/0.1.0",
                "Courier-Device: phone-7", "Courier-Session: 20261201T000000Z-abcd", "Expect:",
                #"If-Match: "v9""#,
            ])
        #expect(wire.body == Array(record.utf8))
    }

    @Test("a Standard Webhooks subscriber's request is signed over its key, the time and the body")
    func signedRequest() throws {
        let subscriber = Subscriber(
            name: try TemporarySpool.subscriberName("signed"), url: "http://127.0.0.1:9/hook",
            signingSecret: Array("courier-test-secret-0123456789ab".utf8))
        let wire = try Self.wire(subscriber, [try Self.item("r1", subscriber: "signed", Self.plainRecord)])
        #expect(
            wire.lines == [
                "Content-Type: application/json", "Idempotency-Key: r1", "User-Agent: courier/0.1.0",
                "Courier-Device: phone-7", "Courier-Session: 20261201T000000Z-abcd", "Expect:", "webhook-id: r1",
                "webhook-timestamp: 1764547200",
                "webhook-signature: v1,oU+vPYa3T5ZMY2br1XJkDA1r5xzPo6ugEYEwIHf84wg=",
            ])
        #expect(wire.body == Array(Self.plainRecord.utf8))
    }

    @Test("a bearer subscriber sends its token-file's token; an OAuth one the round's access token")
    func bearerRequests() throws {
        let tokenSubscriber = try TemporarySpool.subscriber(
            "bearer", url: "http://127.0.0.1:9/in", token: "tok-123")
        let withToken = try Self.wire(
            tokenSubscriber, [try Self.item("r1", subscriber: "bearer", Self.plainRecord)])
        #expect(
            withToken.lines == [
                "Content-Type: application/json", "Idempotency-Key: r1", "User-Agent: courier/0.1.0",
                "Courier-Device: phone-7", "Courier-Session: 20261201T000000Z-abcd", "Expect:",
                "Authorization: Bearer tok-123",
            ])
        var oauthSubscriber = try TemporarySpool.subscriber(
            "oauth", url: "http://127.0.0.1:9/in", headers: [try HTTPHeaderField(name: "X-Team", value: "a")])
        oauthSubscriber.oauth = OAuthClient(tokenURL: "http://127.0.0.1:9/token", clientID: "c", secret: "s")
        let first = try Self.wire(
            oauthSubscriber, [try Self.item("r1", subscriber: "oauth", Self.plainRecord)], bearer: "access-1")
        let second = try Self.wire(
            oauthSubscriber, [try Self.item("r2", subscriber: "oauth", Self.plainRecord)], bearer: "access-2")
        #expect(
            first.lines == [
                "Content-Type: application/json", "Idempotency-Key: r1", "User-Agent: courier/0.1.0",
                "Courier-Device: phone-7", "Courier-Session: 20261201T000000Z-abcd", "Expect:",
                "Authorization: Bearer access-1", "X-Team: a",
            ])
        #expect(second.lines[1] == "Idempotency-Key: r2")
        #expect(second.lines[6] == "Authorization: Bearer access-2", "a new token is used as it comes")
    }

    @Test("a batch request carries the batch's key and a body of its items, each record spliced whole")
    func batchRequest() throws {
        var subscriber = try TemporarySpool.subscriber("batchy", url: "http://127.0.0.1:9/batch?v=2")
        subscriber.mode = .batch
        subscriber.batch.atomic = true
        let records = [
            #"{"id":"a","kind":"order"}"#,
            #"{"id":"b","kind":"order","op":"UPDATE","entity":"ordér \"x\"","entity_id":"E-1","etag":"W/\"v9\""}"#,
            #"{"id":"c","kind":"k","op":"DELETE","version":-12.5e3}"#,
        ]
        let items = try zip(["a", "b", "c"], records).map { key, record in
            try Self.item(key, subscriber: "batchy", record)
        }
        let wire = try Self.wire(subscriber, items)
        #expect(
            wire.lines == [
                "Content-Type: application/json", "Idempotency-Key: batch-a7382d2fde04cc18",
                "User-Agent: courier/0.1.0", "Courier-Device: phone-7", "Courier-Session: 20261201T000000Z-abcd",
                "Expect:",
            ])
        #expect(wire.url == "http://127.0.0.1:9/batch?v=2&atomic=true")
        let expected =
            #"{"items":[{"idempotency_key":"a","op":"CREATE","entity":"order","client_id":"a","payload":"#
            + records[0]
            + #"},{"idempotency_key":"b","op":"UPDATE","entity":"ordér \"x\"","client_id":"E-1","if_match":"W/\"v9\"","payload":"#
            + records[1]
            + #"},{"idempotency_key":"c","op":"DELETE","entity":"k","client_id":"c","if_match":"\"-12.5e3\"","payload":"#
            + records[2] + #"}],"device":{"id":"phone-7","app_version":"0.1.0"}}"#
        #expect(String(decoding: wire.body, as: UTF8.self) == expected)
    }

    /// Found by an attack: `?atomic=true` went after a `#fragment`, which
    /// libcurl leaves off the request, so the server never saw it.
    @Test(
        "an atomic batch's URL carries atomic=true in its query, before any fragment",
        arguments: [
            ("http://127.0.0.1:9/batch", "http://127.0.0.1:9/batch?atomic=true"),
            ("http://127.0.0.1:9/batch?v=2", "http://127.0.0.1:9/batch?v=2&atomic=true"),
            ("http://127.0.0.1:9/batch#part", "http://127.0.0.1:9/batch?atomic=true#part"),
            ("http://127.0.0.1:9/batch?v=2#part", "http://127.0.0.1:9/batch?v=2&atomic=true#part"),
            ("http://127.0.0.1:9/batch#part?x", "http://127.0.0.1:9/batch?atomic=true#part?x"),
        ])
    func atomicBatchURL(url: String, expected: String) throws {
        var subscriber = try TemporarySpool.subscriber("batchy", url: url)
        subscriber.mode = .batch
        subscriber.batch.atomic = true
        let wire = try Self.wire(subscriber, [try Self.item("a", subscriber: "batchy", #"{"id":"a","kind":"order"}"#)])
        #expect(wire.url == expected)
    }

    @Test("a gzip subscriber's body goes compressed with Content-Encoding after If-Match")
    func gzipRequest() throws {
        var subscriber = try TemporarySpool.subscriber("zipped", url: "http://127.0.0.1:9/in")
        subscriber.gzip = true
        let record = #"{"id":"d1","kind":"order","op":"DELETE","etag":"\"t\""}"#
        let wire = try Self.wire(subscriber, [try Self.item("d1", subscriber: "zipped", record)])
        #expect(
            wire.lines == [
                "Content-Type: application/json", "Idempotency-Key: d1", "User-Agent: courier/0.1.0",
                "Courier-Device: phone-7", "Courier-Session: 20261201T000000Z-abcd", "Expect:", #"If-Match: "t""#,
                "Content-Encoding: gzip",
            ])
        #expect(Gzip.decompress(wire.body, limit: 1 << 20) == Array(record.utf8))
    }

    @Test(
        "a field a request adds under a constant name is checked as any other: a control byte is refused, a tab kept",
        arguments: [
            ("v9", nil), ("a\tb", nil), ("a\r\nX-Injected: 1", UInt8(0x0D)), ("a\nb", 0x0A), ("a\u{0}b", 0x00),
            ("a\u{7F}", 0x7F), ("ordér", nil),
        ] as [(String, UInt8?)])
    func constantNamedFieldsCheckTheirValues(value: String, refused: UInt8?) throws {
        let general = Result { () throws(HeaderFieldError) in try HTTPHeaderField(name: "If-Match", value: value) }
        let constant = Result { () throws(HeaderFieldError) in try HTTPHeaderField(constant: "If-Match", value: value) }
        #expect(general == constant)
        if let refused {
            #expect(constant == .failure(.controlByte(name: "If-Match", byte: refused)))
        } else {
            #expect(try constant.get().line == "If-Match: \(value)")
        }
    }

    @Test(
        "the fields a record's one parse carries to its request are those a second reading of the body finds",
        arguments: [
            #"{"id":"a","kind":"order"}"#,
            #"{"id":"b","kind":"order","op":"UPDATE","entity":"ordér \"x\"","entity_id":"E-1","etag":"W/\"v9\""}"#,
            #"{"id":"c","kind":"k","op":"DELETE","version":-12.5e3,"etag":"t"}"#,
            #"{"id":"d","kind":"k","\u006fp":"\u0055PDATE","updates":"E-2","version":3,"op":"DELETE"}"#,
            #"{"id":"e","kind":"k","data":{"op":"UPDATE","etag":"inner"},"entity_id":"x","updates":"x"}"#,
        ])
    func oneParseReadsWhatTheSecondDid(record: String) throws {
        let bytes = Array(record.utf8)
        let parsed = try Record.parse(bytes, maximumSize: .max).get()
        #expect(parsed.outbox == (try OutboxFields.read(bytes).get()))
    }
}
