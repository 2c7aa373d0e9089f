import Foundation
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// `max-batch-bytes` as a limit: the exact size of a batch body, and
/// `courier check`'s warning.
@Suite struct OutboxBoundsTests {
    @Test("a batch body is exactly as long as BatchBody.size says, which max-batch-bytes is held to")
    func theBodySizeIsExact() throws {
        let records = [
            #"{"id":"a","kind":"order"}"#,
            #"{"id":"b","kind":"order","op":"UPDATE","entity":"ordér \"x\"","entity_id":"E-1","etag":"W/\"v9\""}"#,
            #"{"id":"c","kind":"k","op":"DELETE","version":-12.5e3}"#,
        ]
        let keys = ["a", "b", "c"]
        var items: [BatchBody.Item] = []
        for (key, record) in zip(keys, records) {
            items.append(try #require(BatchBody.Item(key: key, record: Array(record.utf8))))
            let body = BatchBody.encode(items, deviceID: "dev\t\"1\"")
            #expect(body.count == BatchBody.size(of: items, deviceID: "dev\t\"1\""))
            #expect((try? JSONSerialization.jsonObject(with: Data(body))) is [String: Any])
        }
        let delivery = try zip(keys, records).map { key, record in
            DeliveryItem(
                entry: try #require(EntryName(fileName: FileName("\(key)@batchy.json"))), body: Array(record.utf8),
                fields: try OutboxFields.read(Array(record.utf8)).get())
        }
        let twoItems = BatchBody.size(of: Array(items.prefix(2)), deviceID: "d")
        var fit = BatchFit(limit: twoItems, deviceID: "d")
        #expect(fit.add(delivery[0], first: true) == .added)
        #expect(fit.add(delivery[1], first: false) == .added)
        #expect(fit.add(delivery[2], first: false) == .full)
        var tight = BatchFit(limit: twoItems - 1, deviceID: "d")
        #expect(tight.add(delivery[0], first: true) == .added)
        #expect(tight.add(delivery[1], first: false) == .full, "one byte over is over")
        var tiny = BatchFit(limit: 40, deviceID: "d")
        guard case .refused(let reason) = tiny.add(delivery[0], first: true) else {
            Issue.record("an item over the limit alone was not refused")
            return
        }
        #expect(reason.contains("over max-batch-bytes (40)"), "\(reason)")
    }

    @Test("courier check warns when max-record-size exceeds what a batch subscriber's max-batch-bytes holds")
    func checkWarnsAboutTheBatchLimit() throws {
        let config =
            "[courier]\nspool = /tmp/s\nmax-record-size = 3MiB\n[subscriber outbox]\nurl = http://h/b\nmode = batch\n"
        let findings = BatchLimitCheck(configuration: try ConfigTests.parse(config)).run()
        #expect(findings.count == 1 && findings.first?.severity == .warning)
        #expect(findings.first?.message.contains("[subscriber outbox]") == true, "\(findings)")
        #expect(findings.first?.message.contains("max-batch-bytes = 2097152") == true, "\(findings)")
        let fine = config.replacingOccurrences(of: "3MiB", with: "1MiB")
        #expect(BatchLimitCheck(configuration: try ConfigTests.parse(fine)).run().isEmpty)
        let single = config.replacingOccurrences(of: "mode = batch\n", with: "")
        #expect(BatchLimitCheck(configuration: try ConfigTests.parse(single)).run().isEmpty)
    }

    /// The decision on siblings of next_cursor (docs/design.md §8, "One
    /// spelling, or both"): batch results and token answers are spelled
    /// one way, snake_case, in the architecture and in RFC 6749, so a
    /// camelCase answer is an answer without those members.
    @Test("batch results and OAuth token answers are read in their documents' one spelling, snake_case")
    func resultsAndTokensHaveOneSpelling() throws {
        let snake = Array(
            #"{"results":[{"idempotency_key":"o-1","status":"OK","server_id":"srv-123","etag":"v2"}]}"#.utf8)
        let result = try #require(BatchBody.results(in: snake)?["o-1"])
        #expect(result.status == "OK" && result.serverID == "srv-123" && result.etag == "v2")
        let camel = Array(#"{"results":[{"idempotencyKey":"o-1","status":"OK","serverId":"srv-123"}]}"#.utf8)
        #expect(
            BatchBody.results(in: camel)?["o-1"] == nil, "an item missing from results[]: retried, not sent")

        let now = Timestamp.now()
        let token = OAuthToken.parse(
            Array(#"{"access_token":"t0k","token_type":"bearer","expires_in":"3600"}"#.utf8), obtained: now)
        #expect((try? token.get())?.value == "t0k")
        let camelToken = OAuthToken.parse(
            Array(#"{"accessToken":"t0k","tokenType":"Bearer","expiresIn":3600}"#.utf8), obtained: now)
        guard case .failure(let failure) = camelToken else {
            Issue.record("a camelCase token answer was taken")
            return
        }
        #expect(failure.description == "the answer has no access_token")
    }

    @Test(
        "an entity tag is accepted exactly when it makes an If-Match value, quoted or weak, within 256 bytes",
        arguments: [
            ("v2", "\"v2\""), ("\"v2\"", "\"v2\""), ("W/\"v9\"", "W/\"v9\""), ("ordér", "\"ordér\""),
            ("", nil), ("\"\"", nil), ("W/\"\"", nil), ("a b", nil), ("a\"b", nil), ("tab\t", nil),
            (String(repeating: "x", count: 254), "\"" + String(repeating: "x", count: 254) + "\""),
            (String(repeating: "x", count: 255), nil),
            ("W/\"" + String(repeating: "x", count: 252) + "\"", "W/\"" + String(repeating: "x", count: 252) + "\""),
            ("W/\"" + String(repeating: "x", count: 253) + "\"", nil),
        ] as [(String, String?)])
    func entityTagsAreAcceptedAsTheyAreSent(_ text: String, _ value: String?) {
        #expect(EntityTagSyntax.headerValue(text) == value)
        #expect(EntityTagSyntax.accepts(text) == (value != nil))
    }
}
