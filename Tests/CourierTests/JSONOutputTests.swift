import Foundation
import Testing

@testable import CourierCLI
@testable import CourierPosix
@testable import CourierSpool

/// The JSON courier prints is one type per shape (Sources/CourierCLI/JSON/);
/// these check the types against courier(1)'s JSON OUTPUT section, and that
/// a key with nothing to say is `null`, not missing.
@Suite struct JSONOutputTests {
    static let manual: [ManPage.Entry] = {
        let source = (try? String(contentsOfFile: Shell.repository + "/man/courier.1", encoding: .utf8)) ?? ""
        return ManPage(source: source).entries(in: "JSON OUTPUT")
    }()

    static let line = LedgerLine(
        time: Timestamp(secondsSinceEpoch: 1_764_486_000), round: "r", subscriber: "alpha", key: "k", event: .sent,
        status: 201, attempt: 1, durationMilliseconds: 12, detail: "ok")
    static let item = ItemJSON(entry: "k@alpha.json", state: "sent", key: "k", subscriber: "alpha")
    static let catalog = CatalogJSON(
        catalog: "products", since: nil, version: nil, lastSuccess: nil, failures: 0, lastDurationMs: nil,
        nextSync: "full", interrupted: false, lastError: nil)

    /// The shapes, each with the tag of its paragraph in courier(1), every
    /// optional left empty.
    static let shapes: [(tag: String, value: any Encodable & Sendable)] = [
        ("an item", item),
        ("a ledger line", LedgerLineJSON(line)),
        ("an item", ListRowJSON(item: item, kind: nil, time: nil, ageSeconds: 5, lastEvent: nil, lastStatus: nil)),
        (
            "why",
            WhyJSON(query: "k", items: [.init(item: item, why: "sent", notes: [], history: [LedgerLineJSON(line)])])
        ),
        (
            "check",
            CheckJSON(
                config: nil, spool: "/s", ok: true, subscribers: [], catalogs: [],
                findings: [.init(severity: "warning", message: "m")])
        ),
        ("catalog status", catalog),
        (
            "ack",
            MovesJSON(
                action: "ack", moved: [.init(entry: "k@a.json", from: "failed", to: nil)],
                notMoved: [.init(entry: "x", reason: "r")], skipped: [.init(entry: "y", state: "failed")])
        ),
        ("hold", HoldJSON(notHeld: "alpha")),
        (
            "status",
            StatusJSON(
                spool: "/s", counts: [:], needsAttention: [], nextRound: nil, notifications: "off",
                notificationsWorking: nil, configurationProblem: nil, tokenWarnings: [],
                held: [.init(subscriber: "a", since: "t", reason: "")],
                workers: [.init(worker: "w", alive: true, claims: 0)],
                deferred: .init(count: 0, due: 0, nextAttempt: nil),
                batches: ["a": .init(batchSize: 1, batches: 1, items: 1, conflicts: 0, conflictRate: 0)],
                catalogs: ["products": catalog], ages: ["a": ["queued": ["total": 1, "under5m": 1]]],
                running: [], lastRound: nil)
        ),
        ("etag", EntityTagJSON(subscriber: "alpha", entity: "k", etag: "v1", key: "k", time: "t", serverID: "s-1")),
    ]

    /// Keys whose values are maps by name (states, subscribers, catalogs),
    /// files courier(1) points to as a whole (`lastRound`, `running`), or a
    /// shape with a paragraph of its own (`history`: ledger lines).
    static let maps: Set<String> = ["counts", "batches", "catalogs", "ages", "lastRound", "running", "history"]

    /// Every key of an object, and of the objects in it, maps by name aside.
    static func allKeys(_ object: [String: Any]) -> [String] {
        object.flatMap { key, value -> [String] in
            guard !maps.contains(key) else { return [key] }
            let inner =
                (value as? [String: Any]).map { [$0] } ?? (value as? [Any])?.compactMap { $0 as? [String: Any] } ?? []
            return [key] + inner.flatMap(allKeys)
        }
    }

    static func keys(_ value: some Encodable) throws -> [String: Any] {
        let text = try #require(Output.jsonText(value))
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("every key of every JSON shape is one courier(1) names in that shape's paragraph")
    func theManPageNamesEveryKey() throws {
        #expect(!Self.manual.isEmpty, "no JSON OUTPUT section in man/courier.1")
        for (tag, value) in Self.shapes {
            let paragraph = try #require(Self.manual.first { $0.tag.hasPrefix(tag) }, "no paragraph \(tag)")
            let words = Set(paragraph.text.split { !$0.isLetter && $0 != "_" }.map(String.init))
            for key in Self.allKeys(try Self.keys(value)) {
                #expect(words.contains(key), "courier(1)'s \(tag) does not name \(key): \(paragraph.text)")
            }
        }
    }

    @Test("an absent value is null, and the key is still there; server_id, queued and ages appear only when they apply")
    func absentValuesAreNull() throws {
        let catalog = try Self.keys(Self.catalog)
        for key in ["since", "version", "lastSuccess", "lastDurationMs", "lastError"] {
            #expect(catalog[key] is NSNull, "\(key): \(catalog)")
        }
        let notHeld = try Self.keys(HoldJSON(notHeld: "alpha"))
        #expect(notHeld["since"] is NSNull && notHeld["reason"] is NSNull && notHeld["queued"] == nil)
        let etag = try Self.keys(
            EntityTagJSON(subscriber: "alpha", entity: "k", etag: "v1", key: "k", time: "t", serverID: nil))
        #expect(etag["server_id"] == nil && etag["etag"] as? String == "v1")
        let check = try Self.keys(
            CheckJSON(config: nil, spool: "/s", ok: true, subscribers: [], catalogs: [], findings: []))
        #expect(check["config"] is NSNull)
        let moved = try Self.keys(MovesJSON.Moved(entry: "k@a.json", from: "failed", to: nil))
        #expect(moved["to"] is NSNull, "a deletion moves to null")
    }

    @Test("a ledger line is its nine columns by name, numbers as numbers; a list row is the item and its row")
    func ledgerLinesAndRows() throws {
        let line = try Self.keys(LedgerLineJSON(Self.line))
        #expect(line.count == 9)
        #expect(line["status"] as? Int == 201 && line["durationMs"] as? Int == 12 && line["event"] as? String == "sent")
        #expect(line["time"] as? String == "2025-11-30T07:00:00.000Z")
        let row = try Self.keys(
            ListRowJSON(item: Self.item, kind: "sleep", time: nil, ageSeconds: 5, lastEvent: .sent, lastStatus: 201))
        #expect(
            Set(row.keys) == [
                "entry", "state", "key", "subscriber", "kind", "time", "ageSeconds", "lastEvent", "lastStatus",
            ])
        #expect(row["time"] is NSNull && row["lastEvent"] as? String == "sent" && row["ageSeconds"] as? Int == 5)
        let since = try Self.keys(
            CatalogJSON(
                catalog: "c", since: .version(7), version: 7, lastSuccess: nil, failures: 0, lastDurationMs: nil,
                nextSync: "delta", interrupted: false, lastError: nil))
        #expect(since["since"] as? Int == 7, "a version since is a number; a server time, a string")
    }
}
