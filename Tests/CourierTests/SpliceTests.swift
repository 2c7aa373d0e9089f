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

@Suite struct SpliceTests {
    @Test func batchResultsAreRead() throws {
        let answer =
            Array(
                #"{"results":[{"idempotency_key":"a","status":"OK"},{"idempotency_key":"b","status":"CONFLICT"}]}"#.utf8
            ) + [10]
        let list = try #require(JSONSplice.value(of: "results", in: answer))
        #expect(list.first == UInt8(ascii: "["))
        let results = try #require(BatchBody.results(in: answer))
        #expect(results["a"]?.status == "OK")
        #expect(results["b"]?.status == "CONFLICT")
    }

    @Test("a batch answer that is not one JSON value has no results: its items are retried, not taken as answered")
    func aBrokenBatchAnswerHasNoResults() {
        let entries = #"{"results":[{"idempotency_key":"a","status":"OK"}]}"#
        #expect(BatchBody.results(in: Array(entries.utf8))?["a"]?.status == "OK")
        let broken = [
            entries + "garbage", entries + entries, #"{"results":[{"idempotency_key":"a","status":"OK","x":01}]}"#,
            #"{"results":[{"idempotency_key":"a","status":"OK","x":"\q"}]}"#,
        ]
        for text in broken {
            #expect(BatchBody.results(in: Array(text.utf8)) == nil, "\(text)")
        }
        #expect(BatchBody.results(in: Array(entries.utf8) + [0xFF]) == nil, "not UTF-8")
    }

    @Test("a batch answer whose entries and top level carry many members courier does not read is still read")
    func aWideBatchAnswerIsRead() {
        let extra = (0..<130).map { #""f\#($0)":1"# }.joined(separator: ",")
        let answers = [
            #"{"results":[{"idempotency_key":"a","status":"OK",\#(extra)}]}"#,
            #"{\#(extra),"results":[{"idempotency_key":"a","status":"OK"}]}"#,
            #"{"stats":{\#(extra)},"results":[{"idempotency_key":"a","status":"OK"}]}"#,
        ]
        for text in answers {
            #expect(BatchBody.results(in: Array(text.utf8))?["a"]?.status == "OK", "\(text.prefix(60))")
        }
        let entry = #"{"idempotency_key":"a","status":"OK","server_id":"s","etag":"v1","message":"m"}"#
        let many = #"{"results":["# + Array(repeating: entry, count: 100).joined(separator: ",") + "]}"
        #expect(BatchBody.results(in: Array(many.utf8))?["a"]?.status == "OK")
    }

    /// The encoder as it was written first, scalar by scalar: what the wire
    /// format's bytes were made with.
    static func scalarEncoded(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": bytes += Array(#"\""#.utf8)
            case "\\": bytes += Array(#"\\"#.utf8)
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                bytes += Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
            default: bytes += Array(String(scalar).utf8)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        return bytes
    }

    @Test("a JSON string is written byte for byte as the scalar-by-scalar encoder wrote it, and counted unbuilt")
    func stringsAreEncodedAsBefore() {
        let texts = [
            "", "plain", #"quo"te"#, #"back\slash"#, "tab\tnew\nline\r", "\u{0}\u{1}\u{1F}\u{7F} ",
            "ordér \"x\"", "日本語", "emoji 🧪 and \u{10FFFF}", "W/\"v9\"", "\u{2028}\u{2029}",
        ]
        for text in texts {
            let expected = Self.scalarEncoded(text)
            #expect(JSONValidator.encodeString(text) == expected, "\(text.debugDescription)")
            #expect(JSONValidator.encodedCount(text) == expected.count, "\(text.debugDescription)")
            var appended = Array("prefix".utf8)
            JSONValidator.appendString(text, to: &appended)
            #expect(appended == Array("prefix".utf8) + expected, "\(text.debugDescription)")
            #expect(JSONValidator.decodeString(expected) == text, "\(text.debugDescription) reads back")
        }
    }

    @Test("a batch result is read in one pass: a member named twice is its last, and unknown members are noted")
    func batchResultsAreReadInOnePass() throws {
        let answer = Array(
            (#"{"results":[{"idempotency_key":"a","status":"ERROR","status":"OK","etag":1,"etag":"v2","#
                + #""server_id":null,"extra":{"k":[1,2]}},"#
                + #"{"idempotency_key":"b","status":"OK","server_id":-12.5,"message":"m","error":"e"},"#
                + #"{"status":"OK"},"not an object",{"idempotency_key":"c","status":7}]}"#).utf8)
        let results = try #require(BatchBody.results(in: answer))
        #expect(results.keys.sorted() == ["a", "b"], "an entry without a key or a string status is not a result")
        let a = try #require(results["a"])
        #expect(a.status == "OK")
        #expect(a.etag == "v2")
        #expect(a.serverID == nil, "null is no id")
        #expect(a.hasUnknownMembers == true)
        #expect(a.ledgerDetail(redactor: Redactor()).contains(#"extra"#), "an unknown member is kept as the text")
        let b = try #require(results["b"])
        #expect(b.serverID == "-12.5")
        #expect(b.message == "m", "message before error")
        #expect(b.hasUnknownMembers == false)
        #expect(b.ledgerDetail(redactor: Redactor()) == "status=OK server_id=-12.5 message=m")
    }

    @Test("a batch answer's list holds memory only for the results courier keeps, not for every element it skips")
    func skippedResultsHoldNoMemory() throws {
        // A hostile server's 8 MiB answer of four million zeros reserved a
        // dictionary for four million results: 0.9 GB of address space.
        let answer = Array((#"{"results":["# + repeatElement("0", count: 200_000).joined(separator: ",") + "]}").utf8)
        let results = try #require(BatchBody.results(in: answer))
        #expect(results.isEmpty)
        #expect(results.capacity < 1_000, "capacity \(results.capacity) for no result")
    }

    @Test("a batch result's strings are read with their escapes decoded, and an escaped name is not the member")
    func batchResultStringsAreDecoded() throws {
        let answer = Array(
            (#"{"results":[{"idempotency_key":"\u0061\/b","status":"O\u004b","etag":"v\"2","server_id":"s\u00e9","#
                + #""\u0065tag":"not read"}]}"#).utf8)
        let results = try #require(BatchBody.results(in: answer))
        let entry = try #require(results["a/b"])
        #expect(entry.status == "OK")
        #expect(entry.etag == "v\"2")
        #expect(entry.serverID == "sé")
        #expect(entry.hasUnknownMembers, "a name written with an escape is a member courier does not read")
    }
}
