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

@Suite struct SinkTests {
    static func post(_ sink: Sink, key: String?, body: String, headers: [(String, String)] = []) -> HTTPResponse {
        var all = headers
        if let key { all.append(("idempotency-key", key)) }
        let request = HTTPRequest(method: "POST", target: "/records", headers: all, body: Array(body.utf8))
        guard case .respond(let response) = sink.handle(request) else { return HTTPResponse(status: 0) }
        return response
    }

    @Test func eachKeyIsStoredOnce() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        #expect(Self.post(sink, key: "k1", body: #"{"a":1}"#).status == 201)
        #expect(Self.post(sink, key: "k1", body: #"{"a":1}"#).status == 200)
        #expect(Self.post(sink, key: "k1", body: #"{"a":2}"#).status == 422)
        #expect(Self.post(sink, key: nil, body: #"{"a":1}"#).status == 400)
        #expect(Self.post(sink, key: "../etc/x", body: #"{"a":1}"#).status == 400)
        #expect(Self.post(sink, key: "k2", body: "not json").status == 400)
        let stored = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/new")
        #expect(stored == ["k1.json"])
        #expect(try String(contentsOfFile: directory.path + "/new/k1.json", encoding: .utf8) == #"{"a":1}"#)
    }

    @Test("a wide batch within courier's default limits is stored whole: 100 records of 2,620 fields each")
    func aWideBatchIsStored() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        // Upper case: no field can be the record's own `id` or `kind`.
        let fields = (0..<2620).map { #""\#(String($0, radix: 36).uppercased())":0"# }.joined(separator: ",")
        let items = try (0..<100).map { index in
            let record = Array(#"{"id":"r\#(index)","kind":"order",\#(fields)}"#.utf8)
            guard let item = BatchBody.Item(key: "k\(index)", record: record) else {
                throw TestFailure("record \(index) is not a batch item")
            }
            return item
        }
        let body = BatchBody.encode(items, deviceID: "d")
        #expect(body.count <= BatchSettings().maxBytes, "within max-batch-bytes")
        let request = HTTPRequest(method: "POST", target: "/transactions/batch", headers: [], body: body)
        guard case .respond(let answer) = sink.handle(request) else { throw TestFailure("no answer to the batch") }
        #expect(answer.status == 200)
        let results = try #require(BatchBody.results(in: answer.body))
        #expect(results.count == 100 && results.values.allSatisfy { $0.status == "OK" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/new").count == 100)
    }

    @Test func keysOlderThanFourteenDaysAreForgotten() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        #expect(Self.post(sink, key: "old", body: #"{"a":1}"#).status == 201)
        let handle = try DirectoryHandle.open(path: directory.path + "/new")
        try handle.setModified(FileName("old.json"), to: .now() - .seconds(15 * 86_400))
        #expect(Self.post(sink, key: "old", body: #"{"a":2}"#).status == 201)
    }

    @Test func signaturesAreChecked() throws {
        let directory = TemporaryDirectory("sink")
        let secret = WebhookSigner.decodeSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!
        let sink = try Sink(directory: directory.path, signingSecret: secret)
        let body = #"{"a":1}"#
        let now = Timestamp.now().secondsSinceEpoch
        let good = WebhookSigner(secret: secret).signature(id: "k", timestamp: now, body: Array(body.utf8))
        let headers = [("webhook-id", "k"), ("webhook-timestamp", String(now))]
        #expect(
            Self.post(sink, key: "k", body: body, headers: headers + [("webhook-signature", "v1,AAAA")]).status == 401)
        #expect(Self.post(sink, key: "k", body: body).status == 401)
        #expect(
            Self.post(sink, key: "k", body: body, headers: headers + [("webhook-signature", "v1,x " + good)]).status
                == 201)
    }

    /// Sends raw bytes, returns whatever comes back before the server hangs up.
    static func exchange(_ bytes: [UInt8], port: UInt16) throws -> String {
        let client = try RawClient(port: port)
        guard client.send(bytes) else { throw TestFailure("send failed") }
        client.finishSending()
        return client.receive(for: .seconds(5)).text
    }
}
