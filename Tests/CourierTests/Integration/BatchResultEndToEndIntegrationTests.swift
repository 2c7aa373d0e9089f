import Foundation
import Testing

@testable import CourierPosix
@testable import CourierSink
@testable import CourierSpool

/// docs/design.md §8, "What the server said" and "Etags", run the way a
/// person does: the built `courier` against `courier sink`, and against a
/// receiver written here from the sync architecture's example answer.
@Suite(.serialized, .tags(.integration)) struct BatchResultEndToEndTests {
    static func configure(_ directory: TemporaryDirectory, url: String, extra: String = "") throws -> String {
        try directory.write(
            """
            [courier]
            spool = spool
            device-id = e2e-device
            settle = 0s

            [subscriber outbox]
            url = \(url)
            mode = batch
            batch-size = 10
            \(extra)
            """, to: "courier.conf")
        return directory.path + "/courier.conf"
    }

    @Test("an update names the etag courier etag printed, and a stale one is a conflict why explains")
    func etagsRoundTripThroughTheSink() throws {
        let directory = TemporaryDirectory("etag-e2e")
        let binary = try CourierBinary.locate()
        let (sink, port) = try binary.startSink(
            ["--dir", directory.path + "/sink"], errors: directory.path + "/sink.log")
        defer {
            sink.terminate()
            sink.waitUntilExit()
        }
        let config = try Self.configure(directory, url: "http://127.0.0.1:\(port)/transactions/batch")
        let courier = { (arguments: [String]) throws -> CourierBinary.Result in
            try binary.run(["--config", config] + arguments)
        }
        #expect(try courier(["init"]).status == 0)
        try directory.write(#"{"id":"o-7","kind":"order","data":{"qty":1}}"#, to: "spool/queued/o-7.json")
        #expect(try courier(["run"]).status == 0)

        let created = try courier(["etag", "o-7"])
        #expect(created.status == 0, "\(created.error)")
        let etag = created.output.trimmingCharacters(in: .newlines)
        #expect(etag.count == 16, "the sink's etag: \(created.output)")
        let why = try courier(["why", "o-7"])
        #expect(why.output.contains("the subscriber said: OK, server_id sink-o-7, etag \(etag)\n"), "\(why.output)")
        #expect(why.output.contains("etag kept for o-7 from outbox: \(etag) (given for o-7 at "), "\(why.output)")
        #expect(why.output.contains("status=OK server_id=sink-o-7 etag=\(etag)"), "the history shows the line")

        // The script writes the next update with the etag it was given.
        try directory.write(
            #"{"id":"o-7-u1","kind":"order","op":"UPDATE","updates":"o-7","etag":"\#(etag)","data":{"qty":2}}"#,
            to: "spool/queued/u1.json")
        #expect(try courier(["run"]).status == 0)
        let updated = try courier(["etag", "o-7", "--subscriber", "outbox"]).output.trimmingCharacters(in: .newlines)
        #expect(updated != etag && updated.count == 16)
        let json = try courier(["etag", "o-7", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: String])
        #expect(
            object == [
                "subscriber": "outbox", "entity": "o-7", "etag": updated, "server_id": "sink-o-7", "key": "o-7-u1",
                "time": object["time"] ?? "",
            ])

        // An update that names the old etag is stale now.
        try directory.write(
            #"{"id":"o-7-u2","kind":"order","op":"UPDATE","updates":"o-7","etag":"\#(etag)","data":{"qty":3}}"#,
            to: "spool/queued/u2.json")
        let round = try courier(["run"])
        #expect(round.output.contains("1 need attention"), "\(round.output)")
        let stale = try courier(["why", "o-7-u2"])
        #expect(
            stale.output.contains(
                "Needs attention: the subscriber reports a conflict: if_match does not match the current version "
                    + "(its current etag is \(updated))"), "\(stale.output)")
        #expect(stale.output.contains("etag kept for o-7 from outbox: \(updated)"), "\(stale.output)")

        let none = try courier(["etag", "o-8"])
        #expect(none.status == 65)
        #expect(none.error.contains("no etag kept for o-8"), "\(none.error)")
        #expect(try courier(["etag", "o-7", "--subscriber", "elsewhere"]).status == 65)
        #expect(try courier(["etag", "not an id"]).status == 64)
    }

    @Test("a receiver that answers as the sync architecture does: fields redacted, escaped and bounded")
    func theArchitecturesAnswerReachesLedgerAndWhy() throws {
        let token = "tok-e2e-secret-0123456789"
        // Written from the architecture's example answer, not from courier's code.
        let server = try LoopbackServer { request, _ in
            guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                let items = object["items"] as? [[String: Any]]
            else { return .respond(.json(400, "{}")) }
            let results: [[String: String]] = items.compactMap { item in
                guard let key = item["idempotency_key"] as? String else { return nil }
                switch key {
                case "created":
                    return ["idempotency_key": key, "status": "OK", "server_id": "srv-123", "etag": "v2"]
                case "stale":
                    return [
                        "idempotency_key": key, "status": "CONFLICT", "message": "version mismatch",
                        "current_etag": "v5",
                    ]
                default:
                    let words = "invalid price\tfor\nline 2 (your key \(token)) " + String(repeating: "x", count: 400)
                    return ["idempotency_key": key, "status": "ERROR", "message": words]
                }
            }
            let body = (try? JSONSerialization.data(withJSONObject: ["results": results])) ?? Data()
            return .respond(HTTPResponse(status: 200, headers: [], body: Array(body)))
        }
        let directory = TemporaryDirectory("architecture-e2e")
        try directory.write(token + "\n", to: "token")
        let config = try Self.configure(directory, url: server.url, extra: "token-file = token")
        let binary = try CourierBinary.locate()
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        for id in ["created", "stale", "refused"] {
            try directory.write(#"{"id":"\#(id)","kind":"order"}"#, to: "spool/queued/\(id).json")
        }
        let round = try binary.run(["--config", config, "run"])
        #expect(round.output.contains("1 sent, 2 need attention"), "\(round.output) \(round.error)")
        #expect(server.requests.first?.header("authorization") == "Bearer \(token)")

        let ledger = try String(
            contentsOfFile: directory.path + "/spool/ledger/\(Timestamp.now().utcDay).tsv", encoding: .utf8)
        #expect(!ledger.contains(token) && !ledger.contains("tok-e2e"), "\(ledger)")
        let lines = ledger.split(separator: "\n")
        #expect(lines.count == 6, "three accepted, three settled, each one line: \(ledger)")
        #expect(lines.allSatisfy { $0.split(separator: "\t", omittingEmptySubsequences: false).count == 9 })
        let refused = try #require(lines.first { $0.contains("\trefused\tneedsAttention\t") })
        #expect(refused.contains(#"status=ERROR message="invalid price\tfor\nline 2 (your key [redacted]) xxx"#))
        let detail = LedgerLine.unescape(refused.split(separator: "\t", omittingEmptySubsequences: false)[8])
        #expect(detail.utf8.count <= 200 && detail.hasSuffix("…\""), "\(detail)")

        let created = try binary.run(["--config", config, "why", "created"]).output
        #expect(created.contains("the subscriber said: OK, server_id srv-123, etag v2\n"), "\(created)")
        #expect(try binary.run(["--config", config, "etag", "created"]).output == "v2\n")
        let stale = try binary.run(["--config", config, "why", "stale"]).output
        #expect(
            stale.contains("the subscriber reports a conflict: version mismatch (its current etag is v5)"), "\(stale)")
        #expect(stale.contains("the subscriber said: CONFLICT, current etag v5: version mismatch\n"), "\(stale)")
        let why = try binary.run(["--config", config, "why", "refused"]).output
        #expect(
            why.contains(#"Needs attention: the subscriber refused the record: invalid price\tfor\nline 2"#), "\(why)")
        #expect(!why.contains(token), "\(why)")

        // The same, for a script: one object, the item's fields as every command names them.
        let json = try binary.run(["--config", config, "why", "stale", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let item = try #require((object["items"] as? [[String: Any]])?.first)
        #expect(object["query"] as? String == "stale" && item["key"] as? String == "stale")
        #expect(item["state"] is String && item["entry"] is String && item["subscriber"] is String)
        #expect((item["why"] as? String)?.contains("version mismatch") == true, "\(item)")
        #expect((item["notes"] as? [String])?.contains { $0.contains("CONFLICT") } == true, "\(item)")
        let history = try #require(item["history"] as? [[String: Any]])
        #expect(history.contains { $0["event"] as? String == "needsAttention" && $0["detail"] is String }, "\(history)")
    }
}
