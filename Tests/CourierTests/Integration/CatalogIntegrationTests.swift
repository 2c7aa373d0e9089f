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

/// docs/design.md §8 catalogs: delta pages from the sink into spool/catalogs/NAME/.
@Suite(.tags(.integration), .serialized) struct CatalogTests {
    /// A catalog directory the sink serves: `count` items with versions
    /// 1000…, set through their modification times.
    static func makeCatalog(in directory: TemporaryDirectory, name: String = "products", count: Int) throws -> String {
        let path = directory.path + "/catalogs/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let handle = try DirectoryHandle.open(path: path)
        for index in 0..<count {
            try Data(#"{"id":"p-\#(index)","name":"Product \#(index)","price":\#(index % 97)}"#.utf8)
                .write(to: URL(fileURLWithPath: path + "/p-\(index).json"))
            try handle.setModified(
                FileName("p-\(index).json"), to: Timestamp(nanosecondsSinceEpoch: Int64(1000 + index) * 1_000_000))
        }
        return directory.path + "/catalogs"
    }

    static func setUp(count: Int, pageSize: Int = 200, gate: RequestGate? = nil) throws
        -> (TemporaryDirectory, TemporarySpool, LoopbackServer, Sink)
    {
        let directory = TemporaryDirectory("catalog")
        let catalogs = try makeCatalog(in: directory, count: count)
        let sink = try Sink(directory: directory.path + "/sink", catalogs: catalogs)
        let server = try LoopbackServer { request, _ in
            gate?.pass()
            if case .respond(let response) = sink.handle(request) { return .respond(response) }
            return .reset
        }
        let spool = try TemporarySpool(subscribers: [])
        spool.configuration.catalogs = [
            Catalog(
                name: try TemporarySpool.subscriberName("products"),
                url: "http://\(server.server.address)/catalogs/products",
                pageSize: pageSize,
                ackURL: "http://\(server.server.address)/sync/ack", cursor: .version)
        ]
        return (directory, spool, server, sink)
    }

    static func local(_ spool: TemporarySpool) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: spool.path + "/catalogs/products"))
    }

    static func sync(_ spool: TemporarySpool, full: Bool = false) throws -> CatalogSyncReport {
        try CatalogSync(
            session: spool.session, configuration: spool.configuration, catalog: spool.configuration.catalogs[0]
        ).run(full: full)
    }

    @Test func thousandsOfEntriesArePagedThenDeltasApplied() throws {
        let (directory, spool, server, _) = try Self.setUp(count: 3000)
        var report = try Self.sync(spool)
        #expect(report.full)
        #expect(report.pages == 15)
        #expect(report.upserts == 3000)
        #expect(report.version == 3999)
        #expect(try Self.local(spool).count == 3000)
        let stored = try Data(contentsOf: URL(fileURLWithPath: spool.path + "/catalogs/products/p-42.json"))
        #expect((try JSONSerialization.jsonObject(with: stored) as? [String: Any])?["name"] as? String == "Product 42")
        #expect(server.requests.allSatisfy { $0.header("courier-session") != nil })

        // The server changes: two items updated, one deleted, one new.
        let catalog = directory.path + "/catalogs/products"
        let handle = try DirectoryHandle.open(path: catalog)
        try Data(#"{"id":"p-7","name":"Renamed","price":1}"#.utf8).write(
            to: URL(fileURLWithPath: catalog + "/p-7.json"))
        try handle.setModified(FileName("p-7.json"), to: Timestamp(nanosecondsSinceEpoch: 5000 * 1_000_000))
        try Data(#"{"id":"new-1","name":"New"}"#.utf8).write(to: URL(fileURLWithPath: catalog + "/new-1.json"))
        try handle.setModified(FileName("new-1.json"), to: Timestamp(nanosecondsSinceEpoch: 5001 * 1_000_000))
        unlink(catalog + "/p-9.json")
        try Data("p-9\t5002\n".utf8).write(to: URL(fileURLWithPath: catalog + "/tombstones.tsv"))
        let before = server.requests.count
        report = try Self.sync(spool)
        #expect(!report.full)
        #expect(report.upserts == 2 && report.tombstones == 1 && report.pages == 1)
        #expect(report.version == 5002)
        // The sink sends tombstones as objects; their version and time reach the ledger.
        let deleted = try spool.ledger().filter { $0.event == .catalogDeleted }
        #expect(deleted.map(\.key) == ["p-9"])
        #expect(deleted.first?.detail.contains("version=5002") == true, "\(deleted)")
        #expect(deleted.first?.detail.contains("deleted_at=1970-01-01T00:00:05") == true, "\(deleted)")
        #expect(server.requests[before].target.contains("since=3999"))
        let local = try Self.local(spool)
        #expect(local.count == 3000 && local.contains("new-1.json") && !local.contains("p-9.json"))
        let renamed = try Data(contentsOf: URL(fileURLWithPath: spool.path + "/catalogs/products/p-7.json"))
        #expect(String(decoding: renamed, as: UTF8.self).contains("Renamed"))

        // Acknowledged each time, with the version reached.
        let acks = try String(contentsOfFile: directory.path + "/sink/acks.tsv", encoding: .utf8).split(separator: "\n")
        #expect(acks.count == 2)
        let columns = acks.last?.split(separator: "\t").map(String.init) ?? []
        #expect(columns.count == 5 && columns[1...3] == ["test-device", "products", "5002"], "\(acks)")
        #expect(columns.last.flatMap(Timestamp.init(rfc3339:)) != nil, "the sink's server_time is acknowledged too")
        #expect(try CatalogState.load(SubscriberName("products")!, in: spool.spool).since == .version(5002))
    }

    @Test func threeFailedSyncsInARowMakeTheNextOneFull() throws {
        let (directory, spool, server, _) = try Self.setUp(count: 10)
        defer { withExtendedLifetime(server) {} }
        _ = try Self.sync(spool)
        // A local file the server never had: only a full sync removes it.
        try Data(#"{"id":"stray"}"#.utf8).write(to: URL(fileURLWithPath: spool.path + "/catalogs/products/stray.json"))
        let good = spool.configuration.catalogs[0]
        spool.configuration.catalogs = [
            Catalog(name: good.name, url: good.url + "-broken", pageSize: 5, ackURL: good.ackURL, cursor: .version)
        ]
        for attempt in 1...3 {
            #expect(throws: CatalogError.self) { try Self.sync(spool) }
            #expect(try CatalogState.load(good.name, in: spool.spool).failures == attempt)
        }
        spool.configuration.catalogs = [good]
        let report = try Self.sync(spool)
        #expect(report.full)
        #expect(report.removedByFullSync == 1)
        #expect(!(try Self.local(spool)).contains("stray.json"))
        let state = try CatalogState.load(good.name, in: spool.spool)
        #expect(state.failures == 0 && state.syncing == nil)
        #expect(try spool.ledger().filter { $0.event == .catalogFailed }.count == 3)
        withExtendedLifetime(directory) {}
    }

    /// kill -9 of `courier catalog sync` in the middle of paging, then a
    /// second run: it resumes from the saved cursor and ends with exactly
    /// the server's items, with either cursor.
    @Test(arguments: CatalogCursor.allCases)
    func aSyncKilledMidwayResumesWithoutLossOrRestart(cursor: CatalogCursor) throws {
        // The server holds the fifth page until the kill: four pages are in,
        // the fifth is in flight, on any machine.
        let gate = RequestGate()
        gate.hold(after: 5)
        let (directory, spool, server, _) = try Self.setUp(count: 2000, pageSize: 100, gate: gate)
        let catalog = spool.configuration.catalogs[0]
        let config = directory.path + "/courier.conf"
        try directory.write(
            "[courier]\nspool = \(spool.path)\ndevice-id = killer\n[catalog products]\nurl = \(catalog.url)\npage-size = 100\n"
                + "ack-url = \(catalog.ackURL ?? "")\nsince = \(cursor.rawValue)\n", to: "courier.conf")
        let binary = try CourierBinary.locate()
        let process = binary.start(["--config", config, "catalog", "sync"])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(gate.waitUntilHolding(), "the sync never asked for page five")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        gate.open()
        let interrupted = try CatalogState.load(catalog.name, in: spool.spool)
        #expect(interrupted.syncing != nil, "the kill landed after the sync finished: the test proved nothing")
        let pagesBefore = server.requests.count
        #expect(pagesBefore == 5)

        let resumed = try binary.run(["--config", config, "catalog", "sync"])
        #expect(resumed.status == 0, "\(resumed.error)")
        #expect(resumed.output.contains("(resumed)"))
        // It went on from the cursor: the first request after the kill was not page one.
        #expect(server.requests[pagesBefore].target.contains("cursor="))
        // Twenty pages, at most the one in flight at the kill fetched twice.
        #expect(server.requests.filter { $0.method == "GET" }.count <= 21)
        #expect(try Self.local(spool) == Set((0..<2000).map { "p-\($0).json" }))
        let since = try #require(try CatalogState.load(catalog.name, in: spool.spool).since)
        switch cursor {
        case .version: #expect(since == .version(2999))
        case .serverTime:
            // The last page's server_time: after the kill, so after every item.
            guard case .serverTime(let text) = since, let time = Timestamp(rfc3339: text) else {
                Issue.record("the cursor is \(since), not a server time")
                break
            }
            #expect(time > Timestamp(nanosecondsSinceEpoch: 2999 * 1_000_000))
        }
        let status = try binary.run(["--config", config, "catalog", "status"])
        #expect(status.output.hasPrefix("products\t\(since)\t"))
    }
}

/// Tombstones as backends built from the sync architecture send them: bare
/// ids, or objects with `id`, `deleted_at` and `version`. The receiver here
/// answers with the architecture's own example page, written from it and
/// not from courier's code.
@Suite(.tags(.integration)) struct TombstoneTests {
    /// A catalog served by `answer`, with `p2` already stored locally.
    static func spool(answering page: String) throws -> (TemporarySpool, LoopbackServer) {
        let server = try LoopbackServer { request, _ in
            request.method == "GET" ? .respond(.json(200, page)) : .respond(.json(200, "{}"))
        }
        let spool = try TemporarySpool()
        let catalog = Catalog(
            name: try #require(SubscriberName("products")), url: "http://\(server.server.address)/catalogs/products",
            cursor: .version)
        spool.configuration.catalogs = [catalog]
        try FileManager.default.createDirectory(
            atPath: spool.path + "/catalogs/products", withIntermediateDirectories: true)
        try Data(#"{"id":"p2","name":"Old"}"#.utf8).write(
            to: URL(fileURLWithPath: spool.path + "/catalogs/products/p2.json"))
        return (spool, server)
    }

    static func sync(_ spool: TemporarySpool) throws -> CatalogSyncReport {
        try CatalogSync(
            session: spool.session, configuration: spool.configuration, catalog: spool.configuration.catalogs[0]
        )
        .run(full: false)
    }

    @Test("the architecture's example page: tombstone objects with deleted_at are applied and kept in the ledger")
    func tombstoneObjectsAreApplied() throws {
        let page = """
            {"upserts": [{"id": "p1", "name": "Leche Alpura", "price": 22.5}],
             "tombstones": [{"id": "p2", "deleted_at": "2025-10-01T00:00:00Z"}],
             "server_time": "2025-10-22T10:00:00Z", "version": 15}
            """
        let (spool, server) = try Self.spool(answering: page)
        defer { withExtendedLifetime(server) {} }
        let report = try Self.sync(spool)
        #expect(report.upserts == 1 && report.tombstones == 1 && report.version == 15)
        let local = try FileManager.default.contentsOfDirectory(atPath: spool.path + "/catalogs/products")
        #expect(local == ["p1.json"])
        let deleted = try spool.ledger().filter { $0.event == .catalogDeleted }
        #expect(deleted.map(\.key) == ["p2"])
        #expect(deleted.first?.detail == "deleted_at=2025-10-01T00:00:00Z", "\(deleted)")
    }

    @Test("bare-id tombstones still work")
    func bareTombstonesAreApplied() throws {
        let (spool, server) = try Self.spool(answering: #"{"upserts":[],"tombstones":["p2"],"version":3}"#)
        defer { withExtendedLifetime(server) {} }
        #expect(try Self.sync(spool).tombstones == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.path + "/catalogs/products").isEmpty)
    }

    @Test("a tombstone that is neither an id nor an object with one fails the sync, naming the page and item")
    func malformedTombstonesAreNamed() throws {
        let (spool, server) = try Self.spool(answering: #"{"upserts":[],"tombstones":["p2",42],"version":3}"#)
        defer { withExtendedLifetime(server) {} }
        #expect(throws: CatalogError.self) { try Self.sync(spool) }
        let failed = try spool.ledger().filter { $0.event == .catalogFailed }
        #expect(failed.first?.detail.contains("page 1, tombstone 2") == true, "\(failed)")
        #expect(
            FileManager.default.fileExists(atPath: spool.path + "/catalogs/products/p2.json"),
            "nothing of a refused page is applied")
    }
}
