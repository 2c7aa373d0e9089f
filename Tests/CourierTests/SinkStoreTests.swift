import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierRecords
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport

/// How `courier sink` keeps what it was sent: one file per stored record,
/// and the entities' ETags in one append-only file.
@Suite struct SinkStoreTests {
    static func batch(_ sink: Sink, _ items: [String], atomic: Bool = false) -> String {
        let request = HTTPRequest(
            method: "POST", target: "/transactions/batch" + (atomic ? "?atomic=true" : ""), headers: [],
            body: Array(#"{"items":[\#(items.joined(separator: ","))]}"#.utf8))
        guard case .respond(let response) = sink.handle(request) else { return "" }
        return String(decoding: response.body, as: UTF8.self)
    }

    @Test("an ETag is the first 16 hex digits of the body's SHA-256, as FIPS 180-2 gives it for abc and for nothing")
    func etagsAreTheDigestsHex() {
        #expect(
            Digest.sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.sha256Hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(ETag.of(Array("abc".utf8)) == "ba7816bf8f01cfea")
        #expect(Digest.hex([0x00, 0x0F, 0xF0, 0xFF]) == "000ff0ff")
    }

    static func item(_ key: String, _ payload: String, ifMatch: String? = nil) -> String {
        #"{"idempotency_key":"\#(key)","op":"CREATE","entity":"order","payload":\#(payload)"#
            + (ifMatch.map { #","if_match":"\#($0)""# } ?? "") + "}"
    }

    static func id(_ text: String) throws -> EntityID {
        guard let id = EntityID(text) else { throw TestFailure("\(text) is no entity id") }
        return id
    }

    static func files(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    @Test("a stored record is one file in new/; its ETag is a line of etags.tsv, with no file per entity")
    func oneFilePerRecord() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        let body = #"{"id":"order-7","kind":"order"}"#
        let response = SinkTests.post(sink, key: "order-7", body: body)
        #expect(response.status == 201)
        let etag = String(Digest.sha256Hex(Array(body.utf8)).prefix(16))
        #expect(response.headers.contains { $0.0 == "ETag" && $0.1 == "\"\(etag)\"" })
        #expect(try Self.files(in: directory) == ["etags.tsv", "new", "tmp"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/new") == ["order-7.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/tmp").isEmpty)
        #expect(try String(contentsOfFile: directory.path + "/etags.tsv", encoding: .utf8) == "order-7\t\(etag)\n")
    }

    @Test("a batch of items is stored as one file per item and one appended line per entity")
    func batchAppends() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        let items = (1...5).map { Self.item("o-\($0)", #"{"id":"o-\#($0)","n":\#($0)}"#) }
        let answer = Self.batch(sink, items)
        #expect(answer.components(separatedBy: #""status":"OK""#).count == 6, "\(answer)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path + "/new").sorted()
                == (1...5).map { "o-\($0).json" })
        let lines = try String(contentsOfFile: directory.path + "/etags.tsv", encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.map { $0.split(separator: "\t")[0] } == ["o-1", "o-2", "o-3", "o-4", "o-5"])
        #expect(try Self.files(in: directory) == ["etags.tsv", "new", "tmp"])
    }

    @Test("an update's ETag replaces its entity's, and If-Match is checked against the newest, after a restart too")
    func etagsSurviveARestart() throws {
        let directory = TemporaryDirectory("sink")
        let first = try Sink(directory: directory.path)
        #expect(SinkTests.post(first, key: "order-7", body: #"{"id":"order-7","qty":1}"#).status == 201)
        let created = try #require(try first.currentETag(of: Self.id("order-7")))
        let update = #"{"id":"order-7-u1","op":"UPDATE","updates":"order-7","qty":2}"#
        #expect(
            SinkTests.post(first, key: "order-7-u1", body: update, headers: [("if-match", "\"\(created)\"")]).status
                == 201)
        let updated = try #require(try first.currentETag(of: Self.id("order-7")))
        #expect(updated != created)

        let restarted = try Sink(directory: directory.path)
        #expect(try restarted.currentETag(of: Self.id("order-7")) == updated)
        let stale = #"{"id":"order-7-u2","op":"UPDATE","updates":"order-7","qty":3}"#
        let refused = SinkTests.post(restarted, key: "order-7-u2", body: stale, headers: [("if-match", created)])
        #expect(refused.status == 412)
        #expect(String(decoding: refused.body, as: UTF8.self).contains(updated))
        #expect(
            SinkTests.post(restarted, key: "order-7-u2", body: stale, headers: [("if-match", updated)]).status == 201)
    }

    @Test("two sinks on one folder see each other's ETags")
    func twoSinksAgree() throws {
        let directory = TemporaryDirectory("sink")
        let one = try Sink(directory: directory.path)
        let other = try Sink(directory: directory.path)
        #expect(SinkTests.post(one, key: "e-1", body: #"{"id":"e-1"}"#).status == 201)
        let etag = try #require(try one.currentETag(of: Self.id("e-1")))
        let update = #"{"id":"e-1-u","updates":"e-1","op":"UPDATE"}"#
        #expect(SinkTests.post(other, key: "e-1-u", body: update, headers: [("if-match", etag)]).status == 201)
        #expect(try one.currentETag(of: Self.id("e-1")) == other.currentETag(of: Self.id("e-1")))
    }

    @Test("a line a crash cut short is no ETag, and the next line starts on a line of its own")
    func tornLastLine() throws {
        let directory = TemporaryDirectory("sink")
        let good = String(repeating: "a", count: 16)
        try directory.write("kept\t\(good)\ncut\t0123", to: "etags.tsv")
        let sink = try Sink(directory: directory.path)
        #expect(try sink.currentETag(of: Self.id("kept")) == good)
        #expect(try sink.currentETag(of: Self.id("cut")) == nil)
        #expect(SinkTests.post(sink, key: "next", body: #"{"id":"next"}"#).status == 201)
        let restarted = try Sink(directory: directory.path)
        #expect(try restarted.currentETag(of: Self.id("next")) != nil)
        #expect(try restarted.currentETag(of: Self.id("kept")) == good)
        let text = try String(contentsOfFile: directory.path + "/etags.tsv", encoding: .utf8)
        #expect(text.hasPrefix("kept\t\(good)\ncut\t0123\nnext\t"), "\(text)")
    }

    @Test("the ETags an older sink kept as a file per entity are read, and lines written since win")
    func legacyFolder() throws {
        let directory = TemporaryDirectory("sink")
        try FileManager.default.createDirectory(atPath: directory.path + "/etags", withIntermediateDirectories: true)
        let old = String(repeating: "b", count: 16)
        let replaced = String(repeating: "c", count: 16)
        let newer = String(repeating: "d", count: 16)
        try directory.write(old, to: "etags/order-1")
        try directory.write(replaced, to: "etags/order-2")
        try directory.write("order-2\t\(newer)\n", to: "etags.tsv")
        let sink = try Sink(directory: directory.path)
        #expect(try sink.currentETag(of: Self.id("order-1")) == old)
        #expect(try sink.currentETag(of: Self.id("order-2")) == newer)
        let update = #"{"id":"order-1-u","updates":"order-1","op":"UPDATE"}"#
        #expect(SinkTests.post(sink, key: "order-1-u", body: update, headers: [("if-match", old)]).status == 201)
    }

    @Test("one key twice in one batch: the same body is a repeat, another body a conflict")
    func repeatedKeyInOneBatch() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        let answer = Self.batch(
            sink,
            [
                Self.item("k", #"{"id":"k","v":1}"#), Self.item("k", #"{"id":"k","v":1}"#),
                Self.item("k", #"{"id":"k","v":2}"#),
            ])
        #expect(answer.components(separatedBy: #""status":"OK""#).count == 3, "\(answer)")
        #expect(answer.contains(#""status":"CONFLICT""#))
        #expect(try String(contentsOfFile: directory.path + "/new/k.json", encoding: .utf8) == #"{"id":"k","v":1}"#)
    }

    @Test("an atomic batch that uses one key with two bodies is a conflict and stores nothing")
    func atomicBatchWithARepeatedKey() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        let answer = Self.batch(
            sink, [Self.item("k", #"{"id":"k","v":1}"#), Self.item("k", #"{"id":"k","v":2}"#)], atomic: true)
        #expect(answer.contains(#""status":"ABORTED""#), "\(answer)")
        #expect(answer.contains(#""status":"CONFLICT""#), "\(answer)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/new").isEmpty)
        #expect(try String(contentsOfFile: directory.path + "/etags.tsv", encoding: .utf8).isEmpty)
    }

    @Test("an item's if_match may name the ETag an earlier item of the same batch was given")
    func ifMatchWithinABatch() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        let created = #"{"id":"order-9","qty":1}"#
        let etag = String(Digest.sha256Hex(Array(created.utf8)).prefix(16))
        let answer = Self.batch(
            sink,
            [
                Self.item("order-9", created),
                Self.item("order-9-u", #"{"id":"order-9-u","updates":"order-9","op":"UPDATE"}"#, ifMatch: etag),
            ])
        #expect(answer.components(separatedBy: #""status":"OK""#).count == 3, "\(answer)")
        #expect(try sink.currentETag(of: Self.id("order-9")) != etag)
    }

    @Test(
        "a body that is not a JSON object in UTF-8 is refused with 400, single or batch",
        arguments: [
            [UInt8](#"{"a":"\#u{FFFD}"#.utf8) + [0xC0, 0xAF, UInt8(ascii: "\""), UInt8(ascii: "}")],
            Array(#"["not","an","object"]"#.utf8), Array(#"{"a":1,}"#.utf8), Array(#"{"items":{}}"#.utf8),
        ])
    func refusedBodies(body: [UInt8]) throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path)
        let single = HTTPRequest(method: "POST", target: "/r", headers: [("idempotency-key", "k")], body: body)
        let batch = HTTPRequest(method: "POST", target: "/transactions/batch", headers: [], body: body)
        for request in [single, batch] {
            guard case .respond(let response) = sink.handle(request) else { throw TestFailure("no answer") }
            // {"items":{}} is an object: a single record, but no batch.
            let expected = request.path == "/r" && body == Array(#"{"items":{}}"#.utf8) ? 201 : 400
            #expect(response.status == expected, "\(request.path) \(String(decoding: body, as: UTF8.self))")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/new").count <= 1)
    }
}
