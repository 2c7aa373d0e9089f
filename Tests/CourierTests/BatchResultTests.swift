import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// docs/design.md §8, "Outcomes": what a batch server says of each item
/// (`server_id`, `etag`, `message`, `current_etag`) reaches its ledger line.
@Suite struct BatchResultTests {
    /// A receiver written from the sync architecture's example answer, not
    /// from courier's code: the first item is created, the second is a
    /// stale version, the third is refused.
    static func architectureServer(
        ok: @escaping @Sendable (String) -> String = { _ in #""server_id":"srv-123","etag":"v2""# },
        message: String = "invalid price"
    ) throws -> LoopbackServer {
        try LoopbackServer { request, _ in
            let results = BatchTests.keys(of: request).map { key -> String in
                let fields: String
                if key.hasPrefix("conflict") {
                    fields = #""status":"CONFLICT","message":"version mismatch","current_etag":"v5""#
                } else if key.hasPrefix("error") {
                    fields =
                        #""status":"ERROR","message":\#(String(decoding: JSONValidator.encodeString(message), as: UTF8.self))"#
                } else {
                    fields = #""status":"OK","# + ok(key)
                }
                return #"{"idempotency_key":"\#(key)",\#(fields)}"#
            }
            return .respond(.json(200, #"{"results":[\#(results.joined(separator: ","))]}"#))
        }
    }

    @Test("each batch result's server_id, etag and message are kept in the item's ledger line")
    func resultFieldsReachTheLedger() throws {
        let server = try Self.architectureServer()
        let spool = try TemporarySpool(subscribers: [BatchTests.batchSubscriber(server.url)])
        spool.companions.append(server)
        for id in ["created-1", "conflict-1", "error-1"] { try spool.dropRecord(id: id) }
        let summary = try spool.runRound(.foreground)

        #expect(server.requests.count == 1, "an ERROR is the server's refusal: it is not retried")
        #expect(try spool.names(in: .sent) == ["created-1@batchy.json"])
        #expect(try spool.names(in: .needsAttention) == ["conflict-1@batchy.json", "error-1@batchy.json"])
        let lines = try spool.ledger().filter { $0.event == .sent || $0.event == .needsAttention }
        let detail = Dictionary(uniqueKeysWithValues: lines.map { ($0.key, $0.detail) })
        #expect(detail["created-1"] == "status=OK server_id=srv-123 etag=v2")
        #expect(detail["conflict-1"] == #"status=CONFLICT current_etag=v5 message="version mismatch""#)
        #expect(detail["error-1"] == #"status=ERROR message="invalid price""#)
        #expect(summary.batches["batchy"]?.conflicts == 1)
    }

    @Test("what a batch server says is redacted before it is cut, escaped, and kept within 200 bytes")
    func resultFieldsAreRedactedEscapedAndBounded() throws {
        let token = "sekrit-token-0123456789"
        // The token straddles the 64-byte cut of server_id; the etag is too
        // long to keep whole; the message has tabs, newlines and the token.
        let serverID = String(repeating: "s", count: 50) + token
        let etag = String(repeating: "e", count: 100)
        let message = "bad\tprice\nsee \(token) " + String(repeating: "m", count: 300)
        let server = try Self.architectureServer(
            ok: { _ in #""server_id":"\#(serverID)","etag":"\#(etag)","message":"fine\tthen""# }, message: message)
        var subscriber = Subscriber(name: try TemporarySpool.subscriberName("batchy"), url: server.url, token: token)
        subscriber.mode = .batch
        let spool = try TemporarySpool(subscribers: [subscriber])
        spool.companions.append(server)
        for id in ["created-1", "error-1"] { try spool.dropRecord(id: id) }
        try spool.runRound()

        let text = try spool.ledgerText()
        #expect(!text.contains(token), "\(text)")
        #expect(!text.contains(String(token.prefix(10))), "no first bytes of a cut secret: \(text)")
        #expect(text.split(separator: "\n").count == 4, "accepted twice, then one line per item: \(text)")
        let lines = try spool.ledger()
        let created = try #require(lines.first { $0.key == "created-1" && $0.event == .sent })
        let fields = Dictionary(
            uniqueKeysWithValues: DetailFields.parse(created.detail[...]).map { ($0.name, $0.value) })
        #expect(fields["server_id"] == String(repeating: "s", count: 50) + "[redacted]")
        #expect(fields["etag"] == String(repeating: "e", count: 61) + "…")
        #expect(fields["message"] == "fine\tthen")
        #expect(text.contains(#"message="fine\tthen""#), "the ledger file escapes the tab: \(text)")

        let refused = try #require(lines.first { $0.key == "error-1" && $0.event == .needsAttention })
        #expect(refused.detail.utf8.count <= LedgerLine.detailLimit)
        let said = try #require(DetailFields.parse(refused.detail[...]).last)
        #expect(said.name == "message")
        #expect(said.value.hasPrefix("bad\tprice\nsee [redacted] mmm"))
        #expect(said.value.hasSuffix("…"), "cut to what is left of the 200 bytes, and marked")
        #expect(text.contains(#"message="bad\tprice\nsee [redacted] mmm"#), "\(text)")
    }

    @Test(
        "detail fields read back as written",
        arguments: [
            [("status", "OK"), ("etag", "v2")],
            [("status", "CONFLICT"), ("current_etag", "W/\"x\\y\""), ("message", "a = b \"quoted\"")],
            [("status", ""), ("server_id", "tab\there")],
            [("status", "OK"), ("message", "ünïcødé and spaces")],
        ])
    func detailFieldsRoundTrip(_ pairs: [(String, String)]) {
        let fields = pairs.filter { $0.0 != "message" }.map { (name: $0.0, value: $0.1) }
        let message = pairs.first { $0.0 == "message" }?.1
        let text = DetailFields.format(fields, message: message, redactor: Redactor())
        let parsed = DetailFields.parse(text[...])
        #expect(parsed.map(\.name) == pairs.map(\.0), "\(text)")
        #expect(parsed.map(\.value) == pairs.map(\.1), "\(text)")
    }

    @Test("a message is cut to the room left, never in the middle of an escape")
    func messagesAreCutToTheRoomLeft() {
        for length in 150...200 {
            let message = String(repeating: "\\\"", count: 120)
            let text = DetailFields.format([("status", "ERROR")], message: message, redactor: Redactor(), limit: length)
            #expect(text.utf8.count <= length, "\(text)")
            let value = DetailFields.parse(text[...]).last?.value ?? ""
            #expect(value.hasSuffix("…"))
            #expect(message.hasPrefix(value.dropLast()), "\(value)")
        }
    }

    @Test("the reference sink answers a batch in the sync architecture's shape")
    func theSinkAnswersWithServerIDsEtagsAndMessages() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        func post(_ items: String) throws -> [[String: String]] {
            let request = HTTPRequest(
                method: "POST", target: "/transactions/batch", headers: [], body: Array(#"{"items":[\#(items)]}"#.utf8))
            guard case .respond(let answer) = sink.handle(request),
                let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
                let results = object["results"] as? [[String: String]]
            else { throw TestFailure("no results[]") }
            return results
        }
        let created = try post(#"{"idempotency_key":"o-1","payload":{"id":"o-1","qty":1}},{"idempotency_key":"bad"}"#)
        #expect(created.count == 2)
        let etag = try #require(created.first?["etag"])
        #expect(created.first == ["idempotency_key": "o-1", "status": "OK", "server_id": "sink-o-1", "etag": etag])
        #expect(created.last?["status"] == "ERROR")
        #expect(created.last?["message"]?.isEmpty == false)

        let updates = try post(
            #"{"idempotency_key":"o-1-u1","if_match":"\"\#(etag)\"","payload":{"id":"o-1-u1","updates":"o-1","qty":2}},"#
                + #"{"idempotency_key":"o-1-u2","if_match":"\"\#(etag)\"","payload":{"id":"o-1-u2","updates":"o-1","qty":3}}"#
        )
        let newer = try #require(updates.first?["etag"])
        #expect(newer != etag)
        #expect(updates.first?["server_id"] == "sink-o-1", "an update names the entity it changed")
        #expect(
            updates.last == [
                "idempotency_key": "o-1-u2", "status": "CONFLICT", "current_etag": newer,
                "message": "if_match does not match the current version",
            ])
        let again = try post(#"{"idempotency_key":"o-1","payload":{"id":"o-1","qty":1}}"#)
        #expect(again.first?["etag"] == newer, "a repeat is OK, with the entity's current etag")
    }
}
