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

/// The bounds and formats behind issue 21's catalog fixes: `max-pages`,
/// the seen ids' encoding, skipped upserts, the sink's page cursor.
@Suite struct CatalogBoundsTests {
    @Test("a server that pages past max-pages fails the sync, naming the cursor and the pages, state unchanged")
    func maxPagesBoundsASync() throws {
        let server = try ArchitectureBackend.catalog(limit: 100) { cursor in
            let next = "c\((cursor.flatMap { Int($0.dropFirst()) } ?? 0) + 1)"
            return ArchitectureBackend.page(
                upserts: ["p1"], serverTime: "2025-10-22T10:00:00Z", version: 1, nextCursor: next)
        }
        let spool = try TemporarySpool()
        let name = try TemporarySpool.subscriberName("products")
        spool.configuration.catalogs = [
            Catalog(
                name: name, url: "http://\(server.server.address)/catalogs/products", cursor: .serverTime, maxPages: 5)
        ]
        #expect(throws: CatalogError.self) {
            try CatalogSync(
                session: spool.session, configuration: spool.configuration, catalog: spool.configuration.catalogs[0]
            )
            .run(full: false)
        }
        #expect(server.requests.filter { $0.method == "GET" }.count == 5)
        let failed = try #require(try spool.ledger().last { $0.event == .catalogFailed })
        #expect(
            failed.detail.contains(#"5 pages fetched, and page 5's next_cursor "c5" asks for more than max-pages (5)"#),
            "\(failed.detail)")
        let state = try CatalogState.load(name, in: spool.spool)
        #expect(state.since == nil && state.syncing == nil && state.cursor == nil && state.failures == 1)
    }

    @Test("max-pages is read per catalog, 10,000 unless given, and refused outside 1 to 1000000")
    func maxPagesIsConfigured() throws {
        let configuration = try ConfigTests.parse(
            "[catalog a]\nurl = http://h/a\n[catalog b]\nurl = http://h/b\nmax-pages = 40\n")
        #expect(configuration.catalogs.map(\.maxPages) == [10_000, 40])
        #expect(configuration.catalogs.map(\.configuredCursor) == [nil, nil])
        for bad in ["0", "-1", "1000001", "ten", "+5"] {
            #expect(throws: ConfigError.self, "\(bad)") {
                try ConfigTests.parse("[catalog a]\nurl = http://h/a\nmax-pages = \(bad)\n")
            }
        }
    }

    @Test("seen ids round-trip whatever bytes they hold, one per line, and no id can be split or forged")
    func seenIDsCannotBeSplitOrForged() throws {
        let ids = ["p1", "keep\nold", "tab\tbed", "50%", "a:b.c_d-e", "é", "3:xyz", "\r", " "]
        let file = SeenIDs.appendix(ids, toFileOf: 0, endingWith: nil)
        let lines = file.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        #expect(lines.count == ids.count + 2, "a header, a line per id, the final newline")
        #expect(SeenIDs.decode(file) == Set(ids))
        #expect(String(decoding: SeenIDs.line("keep\nold"), as: UTF8.self) == "10:keep%0Aold\n")

        // A crash tore the last append: the torn line is not read as a
        // shorter id, and the next append (the replayed page) starts a line.
        var torn = file + Array("5:p-12".utf8)
        #expect(SeenIDs.decode(torn) == Set(ids), "p-12 is not seen")
        torn += SeenIDs.appendix(["p-123"], toFileOf: torn.count, endingWith: torn.last)
        #expect(SeenIDs.decode(torn) == Set(ids + ["p-123"]))
        #expect(SeenIDs.decode(file + Array("7:p%0A\n4:p%ZZ\n".utf8)) == Set(ids), "bad lengths and escapes are no ids")

        // Before this format: one raw id a line, which cannot be trusted.
        #expect(SeenIDs.decode(Array("keep\nold\n".utf8)) == nil)
        #expect(!SeenIDs.isCurrent(Array("keep\nold\n".utf8)) && SeenIDs.isCurrent([]))
    }

    @Test("upserts without a usable id are counted as skipped and said in the ledger")
    func skippedUpsertsAreSaid() throws {
        let server = try ArchitectureBackend.catalog { _ in
            ArchitectureBackend.page(
                upserts: ["p1", "keep\nold", "../x"], serverTime: "2025-10-22T10:00:00Z", version: 1, nextCursor: nil)
        }
        let spool = try TemporarySpool()
        spool.configuration.catalogs = [
            Catalog(
                name: try TemporarySpool.subscriberName("products"),
                url: "http://\(server.server.address)/catalogs/products")
        ]
        let report = try CatalogSync(
            session: spool.session, configuration: spool.configuration, catalog: spool.configuration.catalogs[0]
        ).run(full: false)
        #expect(report.upserts == 1 && report.skipped == 2)
        let synced = try #require(try spool.ledger().last { $0.event == .catalogSynced })
        #expect(synced.detail.hasSuffix(", 2 upserts without a usable id skipped"), "\(synced.detail)")
    }
}
