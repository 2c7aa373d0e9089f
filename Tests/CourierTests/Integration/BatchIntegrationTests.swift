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

/// docs/design.md §8: batch subscribers, optimistic concurrency, and the sink's side.
@Suite(.tags(.integration)) struct BatchTests {
    static func batchSubscriber(
        _ url: String, size: Int = 100, atomic: Bool = false, gzip: Bool = false, maxBytes: Int = 2 << 20
    )
        throws -> Subscriber
    {
        var subscriber = try TemporarySpool.subscriber("batchy", url: url, concurrency: 1)
        subscriber.mode = .batch
        subscriber.batch = BatchSettings(size: size, atomic: atomic, maxBytes: maxBytes)
        subscriber.gzip = gzip
        return subscriber
    }

    /// The items of a batch request, by key.
    static func keys(of request: HTTPRequest) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let items = object["items"] as? [[String: Any]]
        else { return [] }
        return items.compactMap { $0["idempotency_key"] as? String }
    }

    @Test func resultsDecideEachItem() throws {
        let server = try LoopbackServer { request, _ in
            let results = Self.keys(of: request).map { key -> String in
                let status = key.hasPrefix("ok") ? "OK" : key.hasPrefix("conflict") ? "CONFLICT" : "UNAVAILABLE"
                return #"{"idempotency_key":"\#(key)","status":"\#(status)"}"#
            }
            return .respond(.json(200, #"{"results":[\#(results.joined(separator: ","))]}"#))
        }
        let spool = try TemporarySpool(subscribers: [Self.batchSubscriber(server.url)])
        for id in ["ok-1", "ok-2", "conflict-1", "later-1"] { try spool.dropRecord(id: id) }
        let summary = try spool.runRound()
        #expect(server.requests.count == 1, "four items, one batch")
        #expect(
            try spool.names(in: .sent) == ["ok-1@batchy.json", "ok-2@batchy.json"], "\((try? spool.ledgerText()) ?? "")"
        )
        #expect(try spool.names(in: .needsAttention) == ["conflict-1@batchy.json", "later-1@batchy.json"])
        let lines = try spool.ledger().filter { $0.event == .sent || $0.event == .needsAttention }
        #expect(lines.count == 4, "every item gets its own ledger line")
        #expect(lines.first { $0.key == "conflict-1" }?.detail.hasPrefix("status=CONFLICT") == true)
        #expect(summary.batches["batchy"]?.conflicts == 1)
        #expect(summary.batches["batchy"]?.items == 4)

        let request = try #require(server.requests.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        let device = try #require(object["device"] as? [String: Any])
        #expect(device["id"] as? String == "test-device")
        #expect(device["app_version"] as? String == CourierVersion.current)
        let item = try #require((object["items"] as? [[String: Any]])?.first)
        #expect(item["op"] as? String == "CREATE")
        #expect(item["entity"] as? String == "sleep")
        #expect(item["client_id"] as? String == item["idempotency_key"] as? String)
        #expect((item["payload"] as? [String: Any])?["kind"] as? String == "sleep")
    }

    @Test func retriableItemsAreRetriedInAForegroundRound() throws {
        // Keys seen so far: each is unavailable the first time.
        let seen = Locked<Set<String>>([])
        let server = try LoopbackServer { request, _ in
            let results = Self.keys(of: request).map { key in
                // Each key is unavailable the first time it is seen.
                #"{"idempotency_key":"\#(key)","status":"\#(request.body.count > 0 && seen.withLock { $0.insert(key).inserted } ? "UNAVAILABLE" : "OK")"}"#
            }
            return .respond(.json(200, #"{"results":[\#(results.joined(separator: ","))]}"#))
        }
        let spool = try TemporarySpool(subscribers: [Self.batchSubscriber(server.url)])
        for index in 0..<5 { try spool.dropRecord(id: "fg-\(index)") }
        try spool.runRound(.foreground)
        #expect(try spool.names(in: .sent).count == 5)
        #expect(server.requests.count == 2)
        #expect(try spool.ledger().filter { $0.event == .retry }.count == 5)
    }

    @Test func aTimeoutHalvesTheBatchSize() throws {
        let server = try LoopbackServer { request, _ in
            let keys = Self.keys(of: request)
            if keys.count > 2 { return .stall(.seconds(4)) }
            return .respond(
                .json(
                    200,
                    #"{"results":[\#(keys.map { #"{"idempotency_key":"\#($0)","status":"OK"}"# }.joined(separator: ","))]}"#
                ))
        }
        let spool = try TemporarySpool(subscribers: [Self.batchSubscriber(server.url, size: 8)])
        // Batches of two or fewer are answered at once, and must be within
        // the timeout however loaded the machine: a second of room, where
        // 300 ms left a loaded machine little, against a stall of four.
        spool.configuration.foregroundTimeout = .seconds(1)
        spool.configuration.backoff = [.milliseconds(10), .milliseconds(10), .milliseconds(10)]
        for index in 0..<8 { try spool.dropRecord(id: "t-\(index)") }
        let summary = try spool.runRound(.foreground)
        let sizes = server.requests.map { Self.keys(of: $0).count }
        #expect(sizes.first == 8)
        #expect(try spool.names(in: .sent).count == 8)
        // 8 timed out (→ 4), both halves of it timed out (→ 2, → 1); what
        // was left went in twos and ones, and nothing was lost. Four
        // answered batches in a row grew the size back to 2.
        #expect(sizes == [8, 4, 4, 2, 2, 1, 1, 1, 1], "\(sizes)")
        #expect(summary.batches["batchy"]?.finalSize == 2)
        #expect(try spool.ledger().contains { $0.detail.contains("batch of 8 timed out; batch size now 4") })
    }

    @Test func maxBatchBytesSplitsBatches() throws {
        let sinkDirectory = TemporaryDirectory("sink")
        let sink = try Sink(directory: sinkDirectory.path)
        let server = try HTTPServer(handler: sink.handle)
        server.start()
        defer { server.stop() }
        let log = try LoopbackServer(forwardingTo: sink)
        let spool = try TemporarySpool(subscribers: [
            Self.batchSubscriber("http://\(log.server.address)/transactions/batch", size: 100, maxBytes: 4096)
        ])
        let padding = String(repeating: "x", count: 900)
        for index in 0..<10 { try spool.dropRecord(id: "big-\(index)", extra: #","data":"\#(padding)""#) }
        try spool.runRound()
        #expect(try spool.names(in: .sent).count == 10)
        #expect(log.requests.count >= 3)
        #expect(log.requests.allSatisfy { $0.body.count <= 4096 })
    }

    @Test func anAtomicBatchIsAllOrNothingAtTheSink() throws {
        let sinkDirectory = TemporaryDirectory("sink")
        let sink = try Sink(directory: sinkDirectory.path)
        let server = try HTTPServer(handler: sink.handle)
        server.start()
        defer { server.stop() }
        let url = "http://\(server.address)/transactions/batch"
        // The sink already has "taken" with another body: that item conflicts.
        _ = sink.handle(
            HTTPRequest(
                method: "POST", target: "/r", headers: [("idempotency-key", "taken")],
                body: Array(#"{"id":"taken","v":0}"#.utf8)))
        let spool = try TemporarySpool(subscribers: [Self.batchSubscriber(url, atomic: true)])
        for id in ["a-1", "a-2", "taken"] { try spool.dropRecord(id: id) }
        try spool.runRound()
        #expect(try spool.names(in: .needsAttention).count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sinkDirectory.path + "/new") == ["taken.json"])
        #expect(
            try spool.ledger().filter { $0.event == .needsAttention }.allSatisfy {
                $0.detail.contains("ABORTED") || $0.detail.contains("CONFLICT")
            })

        // Without the conflicting item the same kind of batch goes through whole.
        _ = try ManualMoves(session: spool.session).acknowledge(try spool.spool.resolve("taken"))
        _ = try ManualMoves(session: spool.session).resend(try spool.spool.resolve("a-1") + spool.spool.resolve("a-2"))
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["a-1@batchy.json", "a-2@batchy.json"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: sinkDirectory.path + "/new").sorted() == [
                "a-1.json", "a-2.json", "taken.json",
            ])
    }

    @Test func gzipBodiesAreDecodedByTheSink() throws {
        let sinkDirectory = TemporaryDirectory("sink")
        let sink = try Sink(directory: sinkDirectory.path)
        let log = try LoopbackServer(forwardingTo: sink)
        var single = try TemporarySpool.subscriber("zipped", url: log.url)
        single.gzip = true
        let spool = try TemporarySpool(subscribers: [
            single, Self.batchSubscriber("http://\(log.server.address)/transactions/batch", gzip: true),
        ])
        let body = #"{"id":"g-1","kind":"sleep","data":{"text":"\#(String(repeating: "compressible ", count: 200))"}}"#
        try spool.drop(body, as: "g.json")
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["g-1@batchy.json", "g-1@zipped.json"])
        #expect(log.requests.allSatisfy { $0.header("content-encoding") == "gzip" && $0.body.count < body.utf8.count })
        #expect(try Data(contentsOf: URL(fileURLWithPath: sinkDirectory.path + "/new/g-1.json")) == Data(body.utf8))
        #expect(Gzip.decompress(Gzip.compress(Array(body.utf8)) ?? [], limit: 1 << 20) == Array(body.utf8))
        #expect(Gzip.decompress(Array("not gzip".utf8), limit: 100) == nil)
    }

    @Test func updatesCarryIfMatchAndAStaleOneNeedsAttention() throws {
        let sinkDirectory = TemporaryDirectory("sink")
        let sink = try Sink(directory: sinkDirectory.path)
        let log = try LoopbackServer(forwardingTo: sink)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: log.url)])
        try spool.drop(#"{"id":"order-7","kind":"order","data":{"qty":1}}"#, as: "v1.json")
        try spool.runRound()
        let order = try #require(EntityID("order-7"))
        let etag = try #require(try log.requests.first.flatMap { _ in try sink.currentETag(of: order) })
        // A stale update: the server's version has moved on.
        try spool.drop(
            #"{"id":"order-7-u1","kind":"order","op":"UPDATE","updates":"order-7","etag":"stale","data":{"qty":2}}"#,
            as: "u1.json")
        try spool.runRound()
        #expect(log.requests.last?.header("if-match") == "\"stale\"")
        #expect(try spool.names(in: .needsAttention) == ["order-7-u1@alpha.json"])
        let stale = try #require(try spool.ledger().last { $0.event == .needsAttention })
        #expect(stale.status == 412)
        #expect(stale.detail.contains("If-Match does not match"))

        try spool.drop(
            #"{"id":"order-7-u2","kind":"order","op":"UPDATE","updates":"order-7","etag":"\#(etag)","data":{"qty":2}}"#,
            as: "u2.json")
        try spool.runRound()
        #expect(log.requests.last?.header("if-match") == "\"\(etag)\"")
        #expect(try spool.names(in: .sent) == ["order-7-u2@alpha.json", "order-7@alpha.json"])
        // The version moved on again: the first update's etag is stale now too.
        let newer = try sink.currentETag(of: order)
        #expect(newer != nil && newer != etag)
    }

    @Test func theSinksKeyStoreSurvivesARestart() throws {
        let directory = TemporaryDirectory("sink")
        let first = try Sink(directory: directory.path)
        let request = HTTPRequest(
            method: "POST", target: "/r", headers: [("idempotency-key", "kept")], body: Array(#"{"id":"kept"}"#.utf8))
        guard case .respond(let stored) = first.handle(request) else { throw TestFailure("no answer") }
        #expect(stored.status == 201)
        let restarted = try Sink(directory: directory.path)
        guard case .respond(let again) = restarted.handle(request) else { throw TestFailure("no answer") }
        #expect(again.status == 200)
        let batch = HTTPRequest(
            method: "POST", target: "/transactions/batch", headers: [],
            body: Array(
                #"{"items":[{"idempotency_key":"kept","payload":{"id":"kept"}},{"idempotency_key":"new","payload":{"id":"new"}},{"idempotency_key":"kept","payload":{"id":"other"}}]}"#
                    .utf8))
        guard case .respond(let answer) = restarted.handle(batch) else { throw TestFailure("no answer") }
        let text = String(decoding: answer.body, as: UTF8.self)
        #expect(text.contains(#"{"idempotency_key":"kept","status":"OK","server_id":"sink-kept","etag":"#))
        #expect(text.contains(#"{"idempotency_key":"new","status":"OK","server_id":"sink-new","etag":"#))
        #expect(text.contains(#"{"idempotency_key":"kept","status":"CONFLICT","message":"#))
    }
}
