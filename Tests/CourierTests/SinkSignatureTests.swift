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

/// With a signing secret the sink stores nothing the signature does not
/// cover: the signature covers webhook-id, the timestamp and the body, so
/// the Idempotency-Key must equal webhook-id; a batch's items and their keys
/// are inside the signed body.
@Suite struct SinkSignatureTests {
    static let secret: [UInt8] = Array("0123456789abcdef0123456789abcdef".utf8)

    /// A request signed for `id`, sent with these Idempotency-Keys.
    static func signed(
        id: String, keys: [String], body: String, target: String = "/records"
    ) -> HTTPRequest {
        let now = Timestamp.now().secondsSinceEpoch
        let signature = WebhookSigner(secret: secret).signature(id: id, timestamp: now, body: Array(body.utf8))
        let headers =
            keys.map { ("idempotency-key", $0) }
            + [("webhook-id", id), ("webhook-timestamp", String(now)), ("webhook-signature", signature)]
        return HTTPRequest(method: "POST", target: target, headers: headers, body: Array(body.utf8))
    }

    static func respond(_ sink: Sink, _ request: HTTPRequest) -> HTTPResponse {
        guard case .respond(let response) = sink.handle(request) else { return HTTPResponse(status: 0) }
        return response
    }

    static func stored(_ directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path + "/new").sorted()
    }

    @Test("a captured signed request replayed with other Idempotency-Keys is refused and stores nothing")
    func replayWithOtherKeys() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path, signingSecret: Self.secret)
        let body = #"{"id":"pay-1","amount":100}"#
        #expect(Self.respond(sink, Self.signed(id: "pay-1", keys: ["pay-1"], body: body)).status == 201)
        for key in ["pay-2", "pay-3"] {
            let response = Self.respond(sink, Self.signed(id: "pay-1", keys: [key], body: body))
            #expect(response.status == 401)
            #expect(String(decoding: response.body, as: UTF8.self).contains("Idempotency-Key must equal webhook-id"))
        }
        #expect(try Self.stored(directory) == ["pay-1.json"])
    }

    @Test("a signed request without an Idempotency-Key, or with two, is refused")
    func missingOrRepeatedKey() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path, signingSecret: Self.secret)
        let body = #"{"id":"pay-1"}"#
        #expect(Self.respond(sink, Self.signed(id: "pay-1", keys: [], body: body)).status == 401)
        let twice = Self.respond(sink, Self.signed(id: "pay-1", keys: ["pay-1", "pay-9"], body: body))
        #expect(twice.status == 400)
        #expect(String(decoding: twice.body, as: UTF8.self).contains("more than one"))
        #expect(try Self.stored(directory).isEmpty)
    }

    @Test("a signed batch carries its webhook-id as its Idempotency-Key, and its items' keys are signed")
    func signedBatches() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path, signingSecret: Self.secret)
        let body = #"{"items":[{"idempotency_key":"i-1","payload":{"id":"i-1"}}]}"#
        let target = "/transactions/batch"
        let other = Self.signed(id: "batch-1", keys: ["batch-2"], body: body, target: target)
        #expect(Self.respond(sink, other).status == 401)
        // Another item key under the same signature: the body no longer verifies.
        var forged = Self.signed(id: "batch-1", keys: ["batch-1"], body: body, target: target)
        forged = HTTPRequest(
            method: forged.method, target: forged.target, headers: forged.headers,
            body: Array(body.replacingOccurrences(of: "i-1\",\"payload", with: "i-7\",\"payload").utf8))
        #expect(Self.respond(sink, forged).status == 401)
        #expect(try Self.stored(directory).isEmpty)
        let good = Self.respond(sink, Self.signed(id: "batch-1", keys: ["batch-1"], body: body, target: target))
        #expect(good.status == 200)
        #expect(try Self.stored(directory) == ["i-1.json"])
    }
}
