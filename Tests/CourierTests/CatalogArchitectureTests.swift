import Foundation
import Glibc
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

/// Catalog syncs against a backend written from the sync architecture's
/// text alone (`ArchitectureBackend`): its client loop is `do { delta = GET
/// …/delta?since=… } while delta.next_cursor != null`, its pages carry
/// `server_time, version, next_cursor`, its deltas are keyed by
/// `last_catalog_sync_at`. Courier must end each sync with exactly the
/// server's catalog or a clear `catalogFailed`.
@Suite struct CatalogArchitectureTests {
    static func name() throws -> SubscriberName { try TemporarySpool.subscriberName("products") }

    static func spool(_ server: LoopbackServer, cursor: CatalogCursor = .serverTime) throws -> TemporarySpool {
        let spool = try TemporarySpool()
        spool.configuration.catalogs = [
            Catalog(
                name: try name(), url: "http://\(server.server.address)/catalogs/products", pageSize: 3,
                ackURL: "http://\(server.server.address)/sync/ack", cursor: cursor)
        ]
        try FileManager.default.createDirectory(
            atPath: spool.path + "/catalogs/products", withIntermediateDirectories: true)
        return spool
    }

    static func sync(_ spool: TemporarySpool, full: Bool = false, catalog index: Int = 0) throws -> CatalogSyncReport {
        try CatalogSync(
            session: spool.session, configuration: spool.configuration, catalog: spool.configuration.catalogs[index]
        ).run(full: full)
    }

    static func local(_ spool: TemporarySpool, _ catalog: String = "products") throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: spool.path + "/catalogs/" + catalog))
    }

    static func store(_ ids: [String], in spool: TemporarySpool, _ catalog: String = "products") throws {
        try FileManager.default.createDirectory(
            atPath: spool.path + "/catalogs/" + catalog, withIntermediateDirectories: true)
        for id in ids {
            try Data(#"{"id":"\#(id)","name":"local"}"#.utf8).write(
                to: URL(fileURLWithPath: spool.path + "/catalogs/\(catalog)/\(id).json"))
        }
    }

    static func gets(_ server: LoopbackServer) -> [HTTPRequest] { server.requests.filter { $0.method == "GET" } }

    static func cursors(_ server: LoopbackServer) -> [String?] {
        gets(server).map { ArchitectureBackend.query($0.target)["cursor"] }
    }

    /// Three pages joined by `next_cursor`, each stamped with its own
    /// `server_time`, the last one deleting an item of the first.
    static let threePages: @Sendable (String?) -> String = { cursor in
        switch cursor {
        case nil:
            return ArchitectureBackend.page(
                upserts: ["p1", "p2", "p3"], serverTime: "2025-10-22T10:00:00Z", version: 15, nextCursor: "c2")
        case "c2"?:
            return ArchitectureBackend.page(
                upserts: ["p4", "p5", "p6"], serverTime: "2025-10-22T10:00:01Z", version: 15, nextCursor: "c3")
        default:
            return ArchitectureBackend.page(
                upserts: ["p7"], tombstones: ["p2"], serverTime: "2025-10-22T10:00:02Z", version: 16, nextCursor: nil)
        }
    }

    @Test("a delta paged by next_cursor is fetched to its last page, and since = server-time goes on from there")
    func everyNextCursorPageIsFetched() throws {
        let server = try ArchitectureBackend.catalog(pages: Self.threePages)
        let spool = try Self.spool(server)
        let report = try Self.sync(spool)
        #expect(report.pages == 3 && report.upserts == 7 && report.tombstones == 1, "\(report)")
        #expect(Self.cursors(server) == [nil, "c2", "c3"])
        #expect(try Self.local(spool) == Set(["p1", "p3", "p4", "p5", "p6", "p7"].map { $0 + ".json" }))
        let state = try CatalogState.load(Self.name(), in: spool.spool)
        #expect(state.since == .serverTime("2025-10-22T10:00:02Z"), "the last page's server_time, not the first's")
        #expect(state.version == 16)

        _ = try Self.sync(spool)
        let next = try #require(Self.gets(server).dropFirst(3).first)
        #expect(ArchitectureBackend.query(next.target)["since"] == "2025-10-22T10:00:02Z")
        #expect(ArchitectureBackend.query(next.target)["cursor"] == nil)
    }

    @Test("every page asks with exactly since, pageSize and cursor, and the ack is the architecture's")
    func theQueryAndTheAcknowledgementAreTheArchitectures() throws {
        let server = try ArchitectureBackend.catalog(pages: Self.threePages)
        let spool = try Self.spool(server)
        _ = try Self.sync(spool)
        let asked = Self.gets(server).map { ArchitectureBackend.parameters($0.target) }
        #expect(
            asked.map { $0.map(\.name) } == [
                ["since", "pageSize"], ["since", "pageSize", "cursor"], ["since", "pageSize", "cursor"],
            ])
        #expect(asked.allSatisfy { $0.first?.value == "1970-01-01T00:00:00Z" }, "one since for every page of a sync")
        #expect(asked.allSatisfy { $0.dropFirst().first?.value == "3" })
        #expect(Self.gets(server).allSatisfy { $0.path == "/catalogs/products/delta" })

        let acks = server.requests.filter { $0.method == "POST" }
        #expect(acks.map(\.path) == ["/sync/ack"])
        let ack = try #require(
            try JSONSerialization.jsonObject(with: Data(acks.first?.body ?? [])) as? [String: Any])
        #expect(ack["device_id"] as? String == "test-device" && ack["catalog"] as? String == "products")
        #expect((ack["version"] as? NSNumber)?.int64Value == 16)
        #expect(ack["server_time"] as? String == "2025-10-22T10:00:02Z")
        let state = try CatalogState.load(Self.name(), in: spool.spool)
        #expect(state.version == 16 && state.serverTime == "2025-10-22T10:00:02Z")
    }

    /// A sibling of the atomic batch URL's defect: `/delta?since=…` was
    /// appended after a query (and a fragment) of the catalog's own URL,
    /// so the server got its path without `/delta`.
    @Test(
        "a catalog URL's own query goes with every page after /delta, and its fragment stays off",
        arguments: [
            ("/catalogs/products?key=k1", ["key"]), ("/catalogs/products/?key=k1#top", ["key"]),
            ("/catalogs/products#top", []), ("/catalogs/products?#top?key=k1", []),
        ])
    func aCatalogURLsOwnQueryIsKept(suffix: String, own: [String]) throws {
        let server = try ArchitectureBackend.catalog(pages: Self.threePages)
        let spool = try Self.spool(server)
        spool.configuration.catalogs = [
            Catalog(
                name: try Self.name(), url: "http://\(server.server.address)" + suffix, pageSize: 3,
                ackURL: "http://\(server.server.address)/sync/ack", cursor: .serverTime)
        ]
        _ = try Self.sync(spool)
        let asked = Self.gets(server)
        #expect(asked.count == 3)
        #expect(asked.allSatisfy { $0.path == "/catalogs/products/delta" }, "\(asked.map(\.target))")
        let later = own + ["since", "pageSize", "cursor"]
        #expect(
            asked.map { ArchitectureBackend.parameters($0.target).map(\.name) } == [
                own + ["since", "pageSize"], later, later,
            ])
    }

    @Test("a page whose next_cursor and nextCursor disagree fails the sync, naming the page")
    func twoSpellingsThatDisagreeAreRefused() throws {
        let server = try ArchitectureBackend.catalog { cursor in
            cursor == nil
                ? #"{"upserts":[{"id":"p1"}],"tombstones":[],"server_time":"2025-10-22T10:00:00Z","version":1,"#
                    + #""next_cursor":"a","nextCursor":"b"}"#
                : ArchitectureBackend.page(
                    upserts: ["p2"], serverTime: "2025-10-22T10:00:00Z", version: 1, nextCursor: nil)
        }
        let spool = try Self.spool(server)
        #expect(throws: CatalogError.self) { try Self.sync(spool) }
        let failed = try spool.ledger().filter { $0.event == .catalogFailed }
        #expect(
            failed.first?.detail.contains(#"page 1: next_cursor "a" and nextCursor "b" disagree"#) == true, "\(failed)")
        #expect(try Self.local(spool).isEmpty, "nothing of a refused page is applied")
        // The same cursor under both names is one cursor.
        let agreeing = try ArchitectureBackend.catalog { cursor in
            cursor == nil
                ? #"{"upserts":[{"id":"p1"}],"server_time":"2025-10-22T10:00:00Z","version":1,"#
                    + #""next_cursor":"a","nextCursor":"a"}"#
                : ArchitectureBackend.page(
                    upserts: ["p2"], serverTime: "2025-10-22T10:00:00Z", version: 1, nextCursor: nil)
        }
        let other = try Self.spool(agreeing)
        #expect(try Self.sync(other).pages == 2)
    }

    @Test(
        "a cursor cycle A → B → A fails as catalogFailed naming the cursor and the pages, frees the lock, and keeps the state"
    )
    func aCursorCycleFailsTheSync() throws {
        let cycling = Locked(false)
        let server = try ArchitectureBackend.catalog { cursor in
            guard cycling.withLock({ $0 }) else {
                return ArchitectureBackend.page(
                    upserts: ["p1"], serverTime: "2025-10-22T10:00:00Z", version: 15, nextCursor: nil)
            }
            let next = cursor == "A" ? "B" : "A"
            return ArchitectureBackend.page(
                upserts: ["p1"], serverTime: "2025-10-23T10:00:00Z", version: 16, nextCursor: next)
        }
        let spool = try Self.spool(server)
        _ = try Self.sync(spool)
        let before = try CatalogState.load(Self.name(), in: spool.spool)
        cycling.withLock { $0 = true }
        let asked = Self.gets(server).count

        #expect(throws: CatalogError.self) { try Self.sync(spool) }
        #expect(Self.gets(server).count - asked == 3, "pages asked with no cursor, A and B; not A again")
        let failed = try #require(try spool.ledger().last { $0.event == .catalogFailed })
        #expect(
            failed.detail.contains(#"3 pages fetched, and page 3's next_cursor "A" leads back to page 2"#),
            "\(failed.detail)")
        // Another sync (or any process) can take the lock at once.
        let lock = try spool.spool.control.openFile(FileName("catalog-products.lock"), flags: O_RDWR)
        #expect(try lock.lockExclusively(wait: false))
        var after = try CatalogState.load(Self.name(), in: spool.spool)
        #expect(after.failures == before.failures + 1)
        #expect(after.lastError?.contains("leads back") == true)
        after.failures = before.failures
        after.lastError = before.lastError
        #expect(after == before, "the state is as it was before the sync")
    }

    @Test("a full sync removes exactly the local items the server did not send, also when an id it sent is invalid")
    func aFullSyncKeepsNothingTheServerDropped() throws {
        let server = try ArchitectureBackend.catalog { _ in
            ArchitectureBackend.page(
                upserts: ["p1", "keep\nold", "tab\tbed", "p1.json\nstale"], serverTime: "2025-10-22T10:00:00Z",
                version: 15, nextCursor: nil)
        }
        let spool = try Self.spool(server)
        try Self.store(["p1", "keep", "old", "tab", "bed", "stale"], in: spool)
        let report = try Self.sync(spool, full: true)
        #expect(report.upserts == 1, "\(report)")
        #expect(try Self.local(spool) == ["p1.json"])
        #expect(report.removedByFullSync == 5)
    }

    @Test("a full sync an older courier left half done, its seen ids one per line, starts over")
    func anOldSeenFileRestartsTheFullSync() throws {
        let server = try ArchitectureBackend.catalog { cursor in
            cursor == nil
                ? ArchitectureBackend.page(
                    upserts: ["p1"], serverTime: "2025-10-22T10:00:00Z", version: 15, nextCursor: "c2")
                : ArchitectureBackend.page(
                    upserts: ["p9"], serverTime: "2025-10-22T10:00:00Z", version: 15, nextCursor: nil)
        }
        let spool = try Self.spool(server)
        try Self.store(["keep", "old", "p1"], in: spool)
        // What courier wrote before: an upsert "keep\nold" noted as two ids.
        try spool.spool.writeControlFile("catalog-products.seen", Array("keep\nold\n".utf8))
        try spool.spool.writeControlFile(
            "catalog-products.json",
            Array(
                (#"{"complete":false,"cursor":"c2","failures":3,"fullStartedAt":"2025-10-22T09:00:00Z","#
                    + #""since":"2025-10-21T10:00:00Z","syncing":"1970-01-01T00:00:00Z"}"#).utf8))
        let report = try Self.sync(spool)
        #expect(report.full && !report.resumed)
        #expect(Self.cursors(server) == [nil, "c2"], "started again from the first page")
        #expect(try Self.local(spool) == ["p1.json", "p9.json"])
    }

    @Test("out of the box a catalog keys its deltas by time; a state kept with a version cursor keeps it")
    func serverTimeIsTheDefaultCursor() throws {
        let server = try ArchitectureBackend.catalog { _ in
            ArchitectureBackend.page(upserts: ["p1"], serverTime: "2025-10-22T10:00:00Z", version: 15, nextCursor: nil)
        }
        let text =
            "[courier]\nspool = /tmp/x\n[catalog products]\nurl = http://\(server.server.address)/catalogs/products\n"
        let configured = try Configuration.parse(Array(text.utf8), file: "/etc/courier/courier.conf").catalogs[0]

        let fresh = try TemporarySpool()
        fresh.configuration.catalogs = [configured]
        _ = try Self.sync(fresh)
        #expect(ArchitectureBackend.query(Self.gets(server).last?.target ?? "")["since"] == "1970-01-01T00:00:00Z")
        _ = try Self.sync(fresh)
        #expect(ArchitectureBackend.query(Self.gets(server).last?.target ?? "")["since"] == "2025-10-22T10:00:00Z")
        #expect(try CatalogState.load(Self.name(), in: fresh.spool).since == .serverTime("2025-10-22T10:00:00Z"))

        // Synced before the default changed: it goes on by version, as it did.
        let synced = try TemporarySpool()
        synced.configuration.catalogs = [configured]
        try synced.spool.writeControlFile(
            "catalog-products.json", Array(#"{"complete":false,"failures":0,"since":12,"version":12}"#.utf8))
        let report = try Self.sync(synced)
        #expect(!report.full)
        #expect(ArchitectureBackend.query(Self.gets(server).last?.target ?? "")["since"] == "12")
        #expect(try CatalogState.load(Self.name(), in: synced.spool).since == .version(15))
    }
}
