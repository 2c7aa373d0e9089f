import Foundation
import Testing

@testable import CourierCatalog
@testable import CourierPosix
@testable import CourierSpool

/// A full catalog sync under the in-process power cut: whatever sync the
/// cut comes at, the next sync (a new session, as after a reboot) ends with
/// exactly the server's items.
@Suite(.tags(.integration), .serialized) struct CatalogFullSyncPowerCutTests {
    static func items(_ count: Int) -> Set<String> { Set((0..<count).map { "p-\($0).json" }) }

    static func removeLeftovers(in spool: TemporarySpool) throws {
        for name in try spool.spool.tmp.sortedNames() { try spool.spool.tmp.remove(name) }
    }

    @Test("a power cut at any sync of a full catalog sync leaves a catalog the next sync brings back to the server's")
    func aFullSyncSurvivesAPowerCutAtEverySync() throws {
        let (countingDirectory, counting, countingServer, _) = try CatalogTests.setUp(count: 10, pageSize: 4)
        let counter = FaultPlan()
        counting.session.faults = counter
        #expect(try CatalogTests.sync(counting).full)
        #expect(try CatalogTests.local(counting) == Self.items(10))
        let syncs = counter.counts[.sync] ?? 0
        #expect(syncs >= 6, "\(counter.counts)")
        withExtendedLifetime((countingDirectory, countingServer)) {}
        for sync in 1...syncs {
            let label = "power cut at sync #\(sync) of \(syncs)"
            let (directory, spool, server, _) = try CatalogTests.setUp(count: 10, pageSize: 4)
            let cut = FaultPlan(powerCutAtSync: sync)
            spool.session.faults = cut
            // The last line's commit is allowed to fail (the sync is saved
            // by then): such a cut ends the sync without an error.
            _ = try? CatalogTests.sync(spool)
            #expect(cut.powerCut?.happened == true, "\(label)")
            // The machine comes back: a new process, whose staging names
            // (`TIME.PID_N`) are not this one's; its `tmp/` leftovers are
            // dead writers' files, in the way of nothing.
            try Self.removeLeftovers(in: spool)
            let rebooted = try SpoolSession(path: spool.path, worker: nil)
            _ = try CatalogSync(
                session: rebooted, configuration: spool.configuration, catalog: spool.configuration.catalogs[0]
            ).run(full: false)
            let local = try CatalogTests.local(spool)
            #expect(local == Self.items(10), "\(label): \(local.sorted())")
            withExtendedLifetime((directory, server)) {}
        }
    }
}
