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

/// `since = server-time`: deltas keyed by the server's clock, as a backend
/// built from the sync architecture asks for them
/// (`since=<last_catalog_sync_at>`, answered with `server_time`).
@Suite(.tags(.integration)) struct TimeCursorTests {
    /// The architecture's example delta page, with the time it was served at.
    static func examplePage(serverTime: String) -> String {
        """
        {"upserts": [{"id": "p1", "name": "Leche Alpura", "price": 22.5}],
         "tombstones": [{"id": "p2", "deleted_at": "2025-10-01T00:00:00Z"}],
         "server_time": "\(serverTime)", "version": 15}
        """
    }

    /// A receiver written from the architecture's examples: every delta is
    /// the example page; each acknowledgement is answered `{"ok": true}`.
    static func receiver(serverTimes: [String]) throws -> LoopbackServer {
        try LoopbackServer { request, number in
            guard request.method == "GET" else { return .respond(.json(200, #"{"ok": true}"#)) }
            let deltas = max(0, (number - 1) / 2)
            return .respond(.json(200, examplePage(serverTime: serverTimes[min(deltas, serverTimes.count - 1)])))
        }
    }

    static func spool(_ server: LoopbackServer, cursor: CatalogCursor) throws -> TemporarySpool {
        let spool = try TemporarySpool()
        spool.configuration.catalogs = [
            Catalog(
                name: try #require(SubscriberName("products")),
                url: "http://\(server.server.address)/catalogs/products",
                ackURL: "http://\(server.server.address)/sync/ack", cursor: cursor)
        ]
        return spool
    }

    static func sync(_ spool: TemporarySpool, catalog index: Int = 0) throws -> CatalogSyncReport {
        try CatalogSync(
            session: spool.session, configuration: spool.configuration, catalog: spool.configuration.catalogs[index]
        ).run(full: false)
    }

    static func since(_ request: HTTPRequest) -> String? {
        request.target.split(separator: "?").last?.split(separator: "&")
            .first { $0.hasPrefix("since=") }.map { String($0.dropFirst("since=".count)) }
    }

    @Test("with since = server-time the next delta asks since the last page's server_time, and the ack carries it")
    func theServerTimeIsTheCursor() throws {
        let server = try Self.receiver(serverTimes: ["2025-10-22T10:00:00Z", "2025-10-22T12:00:00+02:00"])
        let spool = try Self.spool(server, cursor: .serverTime)
        let first = try Self.sync(spool)
        #expect(first.full && first.serverTime == "2025-10-22T10:00:00Z" && first.version == 15)
        let second = try Self.sync(spool)
        #expect(!second.full)
        _ = try Self.sync(spool)

        let gets = server.requests.filter { $0.method == "GET" }
        #expect(
            gets.map(Self.since) == ["1970-01-01T00:00:00Z", "2025-10-22T10:00:00Z", "2025-10-22T12:00:00%2B02:00"])
        let state = try CatalogState.load(spool.configuration.catalogs[0].name, in: spool.spool)
        #expect(state.since == .serverTime("2025-10-22T12:00:00+02:00"), "kept exactly as the server wrote it")

        let acks = server.requests.filter { $0.method == "POST" }.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(acks.count == 3)
        let ack = try #require(
            try JSONSerialization.jsonObject(with: Data((acks.first ?? "").utf8)) as? [String: Any])
        #expect(ack["server_time"] as? String == "2025-10-22T10:00:00Z")
        #expect((ack["version"] as? NSNumber)?.int64Value == 15)
        #expect(ack["device_id"] as? String == "test-device" && ack["catalog"] as? String == "products")
    }

    @Test("without since the cursor stays the version, as before")
    func theVersionIsTheDefaultCursor() throws {
        let server = try Self.receiver(serverTimes: ["2025-10-22T10:00:00Z"])
        let spool = try Self.spool(server, cursor: .version)
        _ = try Self.sync(spool)
        _ = try Self.sync(spool)
        #expect(server.requests.filter { $0.method == "GET" }.map(Self.since) == ["0", "15"])
        #expect(try CatalogState.load(spool.configuration.catalogs[0].name, in: spool.spool).since == .version(15))
    }

    @Test("a page without server_time fails a server-time catalog, naming the page")
    func aMissingServerTimeIsNamed() throws {
        let server = try LoopbackServer { _, _ in .respond(.json(200, #"{"upserts":[],"tombstones":[],"version":3}"#)) }
        let spool = try Self.spool(server, cursor: .serverTime)
        #expect(throws: CatalogError.self) { try Self.sync(spool) }
        let failed = try spool.ledger().filter { $0.event == .catalogFailed }
        #expect(failed.first?.detail.contains("page 1 has no server_time") == true, "\(failed)")
    }

    @Test("a server_time that is not RFC 3339 fails the sync and leaves the cursor alone")
    func aMalformedServerTimeIsRefused() throws {
        for bad in [#""yesterday""#, "1761127200", #""2025-13-40T10:00:00Z""#, #""2025-10-22T10:00:00Z&version=0""#] {
            let server = try LoopbackServer { _, _ in
                .respond(.json(200, #"{"upserts":[],"tombstones":[],"version":3,"server_time":\#(bad)}"#))
            }
            let spool = try Self.spool(server, cursor: .serverTime)
            #expect(throws: CatalogError.self) { try Self.sync(spool) }
            let failed = try spool.ledger().filter { $0.event == .catalogFailed }
            #expect(failed.first?.detail.contains("server_time must be an RFC 3339 time") == true, "\(bad): \(failed)")
            #expect(try CatalogState.load(spool.configuration.catalogs[0].name, in: spool.spool).since == nil)
        }
    }

    @Test("changing a catalog's cursor from version to server-time makes the next sync a full one")
    func aChangedCursorKindStartsOver() throws {
        let server = try Self.receiver(serverTimes: ["2025-10-22T10:00:00Z"])
        let spool = try Self.spool(server, cursor: .version)
        _ = try Self.sync(spool)
        let catalog = spool.configuration.catalogs[0]
        spool.configuration.catalogs = [
            Catalog(name: catalog.name, url: catalog.url, ackURL: catalog.ackURL, cursor: .serverTime)
        ]
        let report = try Self.sync(spool)
        #expect(report.full)
        #expect(server.requests.filter { $0.method == "GET" }.last.flatMap(Self.since) == "1970-01-01T00:00:00Z")
    }

    @Test("a state file from before time cursors still reads, with its version as the cursor")
    func oldStateFilesStillRead() throws {
        let old = #"{"complete":false,"failures":0,"since":2999,"version":2999}"#
        let state = try JSONDecoder().decode(CatalogState.self, from: Data(old.utf8))
        #expect(state.since == .version(2999) && state.syncing == nil)
    }

    @Test("the sink answers server_time and takes it back as since: a time-keyed delta brings only what changed")
    func theSinkServesTimeCursors() throws {
        let directory = TemporaryDirectory("time-cursor")
        let catalogs = try CatalogTests.makeCatalog(in: directory, count: 250)
        let sink = try Sink(directory: directory.path + "/sink", catalogs: catalogs)
        let server = try LoopbackServer(forwardingTo: sink)
        let spool = try Self.spool(server, cursor: .serverTime)
        spool.configuration.catalogs = [
            Catalog(
                name: try #require(SubscriberName("products")),
                url: "http://\(server.server.address)/catalogs/products", pageSize: 100,
                ackURL: "http://\(server.server.address)/sync/ack", cursor: .serverTime)
        ]
        let first = try Self.sync(spool)
        #expect(first.upserts == 250 && first.pages == 3)
        let reached = try #require(first.serverTime.flatMap(Timestamp.init(rfc3339:)))

        // Changes made after that time: their versions (an item's mtime in
        // ms, a tombstone's column) set 10 ms past it, rather than waiting
        // for the clock, whose file times are coarser than its readings.
        let later = reached + .milliseconds(10)
        try Data(#"{"id":"p-7","name":"Renamed"}"#.utf8).write(
            to: URL(fileURLWithPath: catalogs + "/products/p-7.json"))
        try DirectoryHandle.open(path: catalogs + "/products").setModified(FileName("p-7.json"), to: later)
        try Data("p-9\t\(later.nanosecondsSinceEpoch / 1_000_000)\n".utf8)
            .write(to: URL(fileURLWithPath: catalogs + "/products/tombstones.tsv"))
        let second = try Self.sync(spool)
        #expect(!second.full && second.upserts == 1 && second.tombstones == 1, "\(second)")
        let asked = try #require(server.requests.filter { $0.method == "GET" }.last.flatMap(Self.since))
        #expect(asked.removingPercentEncoding.flatMap(Timestamp.init(rfc3339:)) == reached)
        let acks = try String(contentsOfFile: directory.path + "/sink/acks.tsv", encoding: .utf8)
        #expect(acks.split(separator: "\n").last?.hasSuffix("\t" + (second.serverTime ?? "?")) == true, "\(acks)")
    }

    @Test("a version that is not a whole number fails the sync and leaves the cursor where it was")
    func aVersionMustBeAWholeNumber() throws {
        for bad in ["true", "15.5", "1e30", "18446744073709551615"] {
            let server = try LoopbackServer { request, number in
                guard request.method == "GET" else { return .respond(.json(200, "{}")) }
                let version = number == 1 ? "3" : bad
                return .respond(.json(200, #"{"upserts":[],"tombstones":[],"version":\#(version)}"#))
            }
            let spool = try Self.spool(server, cursor: .version)
            _ = try Self.sync(spool)
            #expect(throws: CatalogError.self, "version \(bad)") { try Self.sync(spool) }
            let failed = try spool.ledger().filter { $0.event == .catalogFailed }
            #expect(failed.first?.detail.contains("version must be a whole number") == true, "\(bad): \(failed)")
            let state = try CatalogState.load(spool.configuration.catalogs[0].name, in: spool.spool)
            #expect(state.since == .version(3), "\(bad)")
        }
    }

    @Test("a nextCursor that is neither a string nor null fails the sync instead of ending it after one page")
    func aNextCursorMustBeAString() throws {
        for cursor in [.version, .serverTime] as [CatalogCursor] {
            let server = try LoopbackServer { request, _ in
                guard request.method == "GET" else { return .respond(.json(200, "{}")) }
                return .respond(
                    .json(
                        200,
                        #"{"upserts":[{"id":"p1"}],"tombstones":[],"nextCursor":2,"version":5,"#
                            + #""server_time":"2025-10-22T10:00:00Z"}"#))
            }
            let spool = try Self.spool(server, cursor: cursor)
            #expect(throws: CatalogError.self) { try Self.sync(spool) }
            let failed = try spool.ledger().filter { $0.event == .catalogFailed }
            #expect(failed.first?.detail.contains("nextCursor must be a string or null") == true, "\(failed)")
            let state = try CatalogState.load(spool.configuration.catalogs[0].name, in: spool.spool)
            #expect(state.since == nil, "the rest of the pages were never fetched")
        }
    }

    @Test("a state file edited to a server time that is no time starts a full sync instead of failing three times")
    func anEditedSinceStartsOver() throws {
        for since in ["yesterday", "2025-10-22", String(repeating: "9", count: 100)] {
            let server = try Self.receiver(serverTimes: ["2025-10-22T10:00:00Z"])
            let spool = try Self.spool(server, cursor: .serverTime)
            let name = spool.configuration.catalogs[0].name
            try spool.spool.writeControlFile(
                CatalogState.fileName(name), Array(#"{"complete":false,"failures":0,"since":"\#(since)"}"#.utf8))
            let report = try Self.sync(spool)
            #expect(report.full, "\(since)")
            #expect(server.requests.filter { $0.method == "GET" }.map(Self.since) == ["1970-01-01T00:00:00Z"])
        }
    }

    /// The kernel stamps a file's mtime from its coarse clock, up to a tick
    /// (4 ms at HZ=250) behind the clock a process reads: a file written
    /// just after a page can be stamped before that page's server_time.
    @Test("an item the sink's catalog gets just after a page is in the delta since that page's server_time")
    func theSinksServerTimeMissesNoLaterChange() throws {
        let directory = TemporaryDirectory("time-cursor")
        let catalog = directory.path + "/catalogs/products"
        try FileManager.default.createDirectory(atPath: catalog, withIntermediateDirectories: true)
        let sink = try Sink(directory: directory.path + "/sink", catalogs: directory.path + "/catalogs")
        func delta(since: String) throws -> [String: Any] {
            let target =
                "/catalogs/products/delta?since="
                + (since.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? since)
            let response = SinkArithmeticTests.respond(
                sink, HTTPRequest(method: "GET", target: target, headers: [], body: []))
            return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        }
        var missed: [String] = []
        for index in 0..<50 {
            let serverTime = try #require(try delta(since: "0")["server_time"] as? String)
            try Data(#"{"id":"p-\#(index)"}"#.utf8).write(to: URL(fileURLWithPath: catalog + "/p-\(index).json"))
            let upserts = try delta(since: serverTime)["upserts"] as? [[String: Any]] ?? []
            if !upserts.contains(where: { $0["id"] as? String == "p-\(index)" }) { missed.append("p-\(index)") }
        }
        #expect(missed.isEmpty, "written after the page, never served by the delta since its server_time: \(missed)")
    }

    @Test("a page whose nextCursor is the cursor it was asked with fails the sync instead of fetching it forever")
    func aRepeatedCursorFailsTheSync() throws {
        let server = try LoopbackServer { request, number in
            guard request.method == "GET" else { return .respond(.json(200, "{}")) }
            // Stands in for forever: the test must end even when courier loops.
            guard number <= 10 else { return .respond(.json(500, #"{"error":"enough"}"#)) }
            return .respond(
                .json(
                    200,
                    #"{"upserts":[{"id":"p1"}],"tombstones":[],"nextCursor":"same","version":5,"#
                        + #""server_time":"2025-10-22T10:00:00Z"}"#))
        }
        let spool = try Self.spool(server, cursor: .serverTime)
        #expect(throws: CatalogError.self) { try Self.sync(spool) }
        #expect(server.requests.filter { $0.method == "GET" }.count == 2)
        let failed = try spool.ledger().filter { $0.event == .catalogFailed }
        #expect(
            failed.first?.detail.contains(#"2 pages fetched, and page 2's next_cursor "same" leads back to page 2"#)
                == true,
            "\(failed)")
    }
}
