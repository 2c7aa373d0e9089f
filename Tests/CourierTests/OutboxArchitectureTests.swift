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

/// Outbox items against a backend written from the sync architecture's
/// text alone: its outbox row is `id, op (CREATE/UPDATE/DELETE), entity,
/// entity_id, payload, idempotency_key`, its batch item `{"idempotency_key",
/// "op", "entity", "client_id", "payload"}`, its concurrency rule
/// `If-Match: <etag> o version`. Every item it gets names its operation,
/// its entity and its precondition, or courier says why it did not send it.
@Suite struct OutboxArchitectureTests {
    static func spool(_ server: LoopbackServer, atomic: Bool = false, maxBytes: Int = 2 << 20) throws
        -> TemporarySpool
    {
        try TemporarySpool(subscribers: [BatchTests.batchSubscriber(server.url, atomic: atomic, maxBytes: maxBytes)])
    }

    static func items(_ server: LoopbackServer) -> [String: [String: Any]] {
        var found: [String: [String: Any]] = [:]
        for request in server.requests {
            for item in ArchitectureBackend.items(of: request) {
                if let key = item["idempotency_key"] as? String { found[key] = item }
            }
        }
        return found
    }

    /// The ledger line that set a dropped file aside, by the id in its name.
    static func refusal(of id: String, in spool: TemporarySpool) throws -> String? {
        try spool.ledger().first { $0.event == .invalid && $0.key.hasSuffix("-" + id + ".json") }?.detail
    }

    @Test("client_id is the id of the entity the item writes, for every op; its etag is kept under it")
    func clientIDNamesTheEntity() throws {
        let server = try ArchitectureBackend.outbox()
        let spool = try Self.spool(server)
        try spool.drop(#"{"id":"order-7","kind":"order","data":{"qty":1}}"#, as: "c.json")
        try spool.drop(
            #"{"id":"order-7-u2","kind":"order","op":"UPDATE","updates":"order-7","etag":"v1"}"#, as: "u.json")
        try spool.drop(
            #"{"id":"order-7-d","kind":"order","op":"DELETE","entity_id":"order-7","etag":"v2"}"#, as: "d.json")
        try spool.drop(#"{"id":"line-1","kind":"order","entity":"order_line","entity_id":"L-9"}"#, as: "l.json")
        try spool.runRound()
        let items = Self.items(server)
        #expect(items.count == 4)
        #expect(items["order-7"]?["client_id"] as? String == "order-7")
        #expect(items["order-7-u2"]?["client_id"] as? String == "order-7")
        #expect(items["order-7-d"]?["client_id"] as? String == "order-7")
        #expect(items["line-1"]?["client_id"] as? String == "L-9")
        #expect(items["line-1"]?["entity"] as? String == "order_line")
        #expect(items["order-7"]?["entity"] as? String == "order")
        let store = EntityTagStore(spool: spool.spool)
        let batchy = try TemporarySpool.subscriberName("batchy")
        let entity = try #require(RecordID("L-9"))
        let record = try #require(RecordID("line-1"))
        #expect(try store.tag(of: entity, from: batchy)?.etag == "v2")
        #expect(try store.tag(of: record, from: batchy) == nil)
    }

    /// Records a backend built from the architecture would misread, each
    /// with the field its refusal must name.
    static let misread: [(id: String, record: String, field: String)] = [
        ("op-lower", #""op":"update","etag":"v1""#, "op"),
        ("op-frob", #""op":"FROB""#, "op"),
        ("op-number", #""op":5"#, "op"),
        ("entity-number", #""entity":7"#, "entity"),
        ("version-null", #""op":"UPDATE","version":null"#, "version"),
        ("version-object", #""op":"UPDATE","version":{"n":1}"#, "version"),
        ("etag-empty", #""op":"DELETE","etag":"""#, "etag"),
        ("etag-quote", #""op":"UPDATE","etag":"a\"b""#, "etag"),
        ("etag-list", #""op":"UPDATE","etag":["v1"]"#, "etag"),
        ("entity-id-number", #""entity_id":7"#, "entity_id"),
        ("two-entities", #""op":"UPDATE","entity_id":"a","updates":"b","etag":"v1""#, "entity_id"),
    ]

    @Test(
        "an item the architecture's server would misread needs attention at intake, naming the field; its neighbours go"
    )
    func misreadableItemsNeedAttention() throws {
        let server = try ArchitectureBackend.outbox()
        let spool = try Self.spool(server)
        for bad in Self.misread {
            try spool.drop(#"{"id":"\#(bad.id)","kind":"order",\#(bad.record)}"#, as: bad.id + ".json")
        }
        try spool.dropRecord(id: "good-1", kind: "order")
        try spool.dropRecord(id: "good-2", kind: "order", extra: #","op":"UPDATE","etag":"W/\"v1\"""#)
        let summary = try spool.runRound()
        #expect(try spool.names(in: .sent) == ["good-1@batchy.json", "good-2@batchy.json"])
        #expect(summary.invalid == Self.misread.count)
        #expect(Set(Self.items(server).keys) == ["good-1", "good-2"], "no misreadable item reached the server")
        #expect(Self.items(server)["good-2"]?["if_match"] as? String == #"W/"v1""#)
        for bad in Self.misread {
            let reason = try Self.refusal(of: bad.id, in: spool)
            #expect(reason?.contains("`\(bad.field)`") == true, "\(bad.id): \(reason ?? "no invalid line")")
        }

        // `courier enqueue` refuses them alike, naming the field.
        var enqueuer = Enqueuer(inbox: try SpoolInbox(path: spool.path), configuration: spool.configuration)
        for bad in Self.misread {
            do {
                try enqueuer.enqueue(Array(#"{"id":"\#(bad.id)","kind":"order",\#(bad.record)}"#.utf8), source: bad.id)
                Issue.record("enqueue took \(bad.id)")
            } catch {
                #expect(error.description.contains("`\(bad.field)`"), "\(bad.id): \(error)")
            }
        }
    }

    @Test("no batch body passes max-batch-bytes, and an item that cannot fit in one needs attention with the reason")
    func maxBatchBytesIsALimit() throws {
        let server = try ArchitectureBackend.outbox()
        let spool = try Self.spool(server, maxBytes: 64 << 10)
        let filler = String(repeating: "x", count: 20_000)
        for index in 0..<5 { try spool.dropRecord(id: "s-\(index)", kind: "order", extra: #","data":"\#(filler)""#) }
        try spool.dropRecord(id: "big", kind: "order", extra: #","data":"\#(String(repeating: "y", count: 200_000))""#)
        try spool.runRound()
        #expect(server.requests.allSatisfy { $0.body.count <= 64 << 10 }, "\(server.requests.map(\.body.count))")
        #expect(try spool.names(in: .sent).count == 5)
        #expect(try spool.names(in: .needsAttention) == ["big@batchy.json"])
        let reason = try spool.ledger().first { $0.key == "big" && $0.event == .needsAttention }?.detail
        #expect(reason?.contains("over max-batch-bytes (65536)") == true, "\(reason ?? "-")")
    }

    /// Guessed at 160 bytes besides the record and its key, an item with a
    /// long `entity` and `etag` takes about 300 more in the body (both
    /// appear again as the item's `entity` and `if_match`): three such items
    /// are guessed to fit in 4 KiB and take about 4.6 KiB.
    @Test("items whose entity and etag are long still fill batches only up to max-batch-bytes")
    func theLimitCountsEveryMemberOfAnItem() throws {
        let server = try ArchitectureBackend.outbox()
        let spool = try Self.spool(server, maxBytes: 4096)
        let entity = String(repeating: "e", count: 128)
        let etag = String(repeating: "t", count: 250)
        let data = String(repeating: "d", count: 600)
        for index in 0..<6 {
            try spool.dropRecord(
                id: "u-\(index)", kind: "order",
                extra: #","op":"UPDATE","entity":"\#(entity)","etag":"\#(etag)","data":"\#(data)""#)
        }
        try spool.runRound()
        #expect(try spool.names(in: .sent).count == 6, "\((try? spool.ledgerText()) ?? "")")
        #expect(server.requests.allSatisfy { $0.body.count <= 4096 }, "\(server.requests.map(\.body.count))")
        #expect(server.requests.count == 3, "two items a batch: \(server.requests.map(\.body.count))")
    }

    @Test("ERROR and INVALID are never retried, in a plain batch and in an atomic one alike")
    func refusedItemsAreNotRetried() throws {
        for atomic in [false, true] {
            let server = try ArchitectureBackend.outbox { item in
                (item["idempotency_key"] as? String)?.hasPrefix("bad") == true ? "ERROR" : "OK"
            }
            let spool = try Self.spool(server, atomic: atomic)
            try spool.dropRecord(id: "ok-1", kind: "order")
            try spool.dropRecord(id: "bad-1", kind: "order")
            try spool.runRound(.foreground)
            #expect(server.requests.count == 1, "atomic \(atomic): \(server.requests.count) requests")
            #expect(try spool.ledger().filter { $0.event == .retry }.isEmpty, "atomic \(atomic)")
            let attention = try spool.names(in: .needsAttention)
            #expect(attention == (atomic ? ["bad-1@batchy.json", "ok-1@batchy.json"] : ["bad-1@batchy.json"]))
        }
    }

    @Test(
        "courier_batch_size is the size of the batches sent, and CONFLICT answers are counted in courier_events_total")
    func batchMetricsAreAsSent() throws {
        let server = try ArchitectureBackend.outbox { item in
            (item["idempotency_key"] as? String) == "o-3" ? "CONFLICT" : "OK"
        }
        let spool = try Self.spool(server)
        for index in 0..<7 { try spool.dropRecord(id: "o-\(index)", kind: "order") }
        let summary = try spool.runRound()
        let text = try MetricsFile(path: spool.path + "/m.prom", session: spool.session).render(
            summary: summary, exitStatus: 0)
        #expect(text.contains(#"courier_batch_size{subscriber="batchy"} 7"#), "\(text)")
        #expect(text.contains(#"courier_events_total{subscriber="batchy",event="conflict"} 1"#), "\(text)")
    }
}
