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

/// CatalogArchitectureTests against the sink on loopback, and the shipped timer through systemd-analyze.
@Suite(.tags(.integration)) struct CatalogArchitectureIntegrationTests {
    @Test(
        "after the third failed daily run the next sync of that catalog is full and paginated; the others stay deltas")
    func theThirdFailureMakesAPaginatedFullSync() throws {
        let server = try ArchitectureBackend.catalog(limit: 1000, pages: CatalogArchitectureTests.threePages)
        let failing = Locked(false)
        let broken = try LoopbackServer { request, _ in
            if failing.withLock({ $0 }) { return .respond(.json(503, #"{"error": "down"}"#)) }
            guard request.method == "GET" else { return .respond(.json(200, #"{"ok": true}"#)) }
            let first = ArchitectureBackend.query(request.target)["cursor"] == nil
            return .respond(
                .json(
                    200,
                    ArchitectureBackend.page(
                        upserts: [first ? "q1" : "q2"], serverTime: "2025-10-22T10:00:00Z", version: 15,
                        nextCursor: first ? "c2" : nil)))
        }
        let spool = try CatalogArchitectureTests.spool(server)
        let prices = try TemporarySpool.subscriberName("prices")
        spool.configuration.catalogs.append(
            Catalog(name: prices, url: "http://\(broken.server.address)/catalogs/prices", cursor: .serverTime))
        _ = try CatalogArchitectureTests.sync(spool)
        _ = try CatalogArchitectureTests.sync(spool, catalog: 1)
        try CatalogArchitectureTests.store(["gone"], in: spool, "prices")
        try CatalogArchitectureTests.store(["gone"], in: spool)
        failing.withLock { $0 = true }
        for attempt in 1...3 {
            #expect(!(try CatalogArchitectureTests.sync(spool)).full)
            #expect(throws: CatalogError.self) { try CatalogArchitectureTests.sync(spool, catalog: 1) }
            #expect(try CatalogState.load(prices, in: spool.spool).failures == attempt)
        }
        failing.withLock { $0 = false }
        #expect(!(try CatalogArchitectureTests.sync(spool)).full, "the catalog that did not fail goes on with deltas")
        #expect(try CatalogArchitectureTests.local(spool).contains("gone.json"))
        let getsBefore = CatalogArchitectureTests.gets(broken).count
        let report = try CatalogArchitectureTests.sync(spool, catalog: 1)
        #expect(report.full && report.pages == 2 && report.removedByFullSync == 1, "\(report)")
        #expect(try CatalogArchitectureTests.local(spool, "prices") == ["q1.json", "q2.json"])
        let asked = CatalogArchitectureTests.gets(broken).dropFirst(getsBefore).map {
            ArchitectureBackend.query($0.target)
        }
        #expect(asked.map { $0["since"] } == ["1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"])
        #expect(asked.map { $0["cursor"] } == [nil, "c2"])
        #expect(try CatalogState.load(prices, in: spool.spool).failures == 0)
    }

    @Test("the metrics name each catalog's sync duration and its failures")
    func catalogMetrics() throws {
        let failing = Locked(true)
        let server = try LoopbackServer { request, _ in
            if failing.withLock({ $0 }) { return .respond(.json(500, #"{"error":"down"}"#)) }
            return request.method == "GET"
                ? .respond(
                    .json(
                        200,
                        ArchitectureBackend.page(
                            upserts: ["p1"], serverTime: "2025-10-22T10:00:00Z", version: 15, nextCursor: nil)))
                : .respond(.json(200, #"{"ok": true}"#))
        }
        let spool = try CatalogArchitectureTests.spool(server)
        let metrics = MetricsFile(
            path: spool.path + "/x.prom", session: spool.session, catalogs: [try CatalogArchitectureTests.name()])
        #expect(throws: CatalogError.self) { try CatalogArchitectureTests.sync(spool) }
        var text = try metrics.render(summary: nil, exitStatus: 0)
        #expect(text.contains(#"courier_catalog_failures{catalog="products"} 1"#), "\(text)")
        #expect(text.contains(#"courier_events_total{subscriber="products",event="catalogFailed"} 1"#), "\(text)")
        failing.withLock { $0 = false }
        let report = try CatalogArchitectureTests.sync(spool)
        text = try metrics.render(summary: nil, exitStatus: 0)
        #expect(text.contains(#"courier_catalog_failures{catalog="products"} 0"#), "\(text)")
        let duration = String(Double(report.durationMilliseconds) / 1000)
        #expect(text.contains(#"courier_catalog_sync_duration_seconds{catalog="products"} \#(duration)"#), "\(text)")
        #expect(text.contains(#"courier_events_total{subscriber="products",event="catalogSynced"} 1"#), "\(text)")
    }

    @Test(
        "the nightly catalog timer runs between 02:00 and 04:00 local time, 03:00 give or take 30 minutes, fixed per device",
        .needs("systemd-analyze"))
    func theCatalogTimerKeepsTheArchitecturesWindow() throws {
        let unit = try String(
            contentsOfFile: Shell.repository + "/etc/systemd/courier-catalog.timer", encoding: .utf8)
        func value(_ key: String) -> String? {
            unit.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }
        let calendar = try #require(value("OnCalendar"))
        let normalized = try Shell.run(["systemd-analyze", "calendar", calendar])
        #expect(normalized.status == 0, "\(normalized.output)")
        // Every day, at one time of day, in local time (no zone named).
        let form = try #require(
            normalized.output.split(separator: "\n").first { $0.contains("Normalized form:") }?
                .split(separator: " ").last.map(String.init))
        let clock = form.split(separator: ":").compactMap { Int($0) }
        #expect(normalized.output.contains("Normalized form: *-*-* ") && clock.count == 3, "\(normalized.output)")
        let start = clock.count == 3 ? clock[0] * 3600 + clock[1] * 60 + clock[2] : -1
        let delay = try Shell.run(["systemd-analyze", "timespan", try #require(value("RandomizedDelaySec"))])
        let microseconds = delay.output.split(separator: "\n").first { $0.contains("μs:") }?
            .split(separator: " ").last.flatMap { Int($0) }
        let spread = try #require(microseconds) / 1_000_000
        #expect(start >= 2 * 3600 && start + spread <= 4 * 3600, "within 02:00–04:00: \(start) + \(spread)")
        #expect(abs(start + spread / 2 - 3 * 3600) <= 300, "centred on 03:00")
        #expect(abs(spread - 3600) <= 600, "about ±30 minutes")
        #expect(value("FixedRandomDelay") == "yes", "the same offset every night on one device")
        #expect(value("Persistent") == "true")
    }
}
