import Foundation
import Glibc
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierSupport

/// The defects of a protocol written by hand in many places (issue 19),
/// each as it was found: a rename that replaced a file, a ledger line after
/// its removal, a sync the fault seam never saw, state read back from text
/// a server wrote.
@Suite(.tags(.integration)) struct DurableProtocolTests {
    static let claimed = Array(#"{"id":"k1","kind":"sleep","data":{"from":"the claim"}}"#.utf8)
    static let dropped = Array(#"{"id":"k1","kind":"sleep","data":{"from":"a script"}}"#.utf8)

    /// The one invalid-* file in needsAttention/, and its bytes.
    static func flagged(_ spool: TemporarySpool) throws -> (name: String, bytes: [UInt8]) {
        let names = try spool.names(in: .needsAttention).filter { $0.hasPrefix("invalid-") }
        #expect(names.count == 1, "\(names)")
        let name = try #require(names.first)
        let bytes = try spool.spool.read(FileName(name), in: .needsAttention, limit: 1 << 20)
        return (name, bytes)
    }

    @Test("recovery never replaces a file dropped under a claim's name: the drop is flagged, the claim is sent")
    func recoveryNeverReplacesADrop() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        // A round killed with k1 in flight, then a script dropping other bytes under its entry's name.
        try spool.spool.deliverNewFile(Self.claimed, named: FileName("k1@alpha.json"), into: .sending)
        try spool.drop(Self.dropped, as: FileName("k1@alpha.json"))
        try spool.runRound()

        #expect(try spool.spool.read(FileName("k1@alpha.json"), in: .sent, limit: 1 << 20) == Self.claimed)
        #expect(server.requests.map(\.body) == [Self.claimed])
        let (name, bytes) = try Self.flagged(spool)
        #expect(bytes == Self.dropped, "the script's bytes are kept, unchanged")
        let invalid = try spool.ledger().filter { $0.event == .invalid }
        #expect(invalid.map(\.key) == [name])
        #expect(invalid.first?.detail.contains("k1@alpha.json") == true, "\(invalid.map(\.detail))")
    }

    @Test("a dead worker's claim never replaces a file dropped under its name in queued/")
    func deadWorkersClaimNeverReplacesADrop() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        let dead = try Spool(path: spool.path)
        try dead.join(as: WorkerID("w2"))
        try dead.deliverNewFile(Self.claimed, named: FileName("k1@alpha.json"), into: .sending)
        try spool.drop(Self.dropped, as: FileName("k1@alpha.json"))
        try SharedSpoolTests.round(spool, worker: "w1")

        #expect(try spool.spool.read(FileName("k1@alpha.json"), in: .sent, limit: 1 << 20) == Self.claimed)
        #expect(try Self.flagged(spool).bytes == Self.dropped)
    }

    @Test("a person's ack never replaces what is already in failed/ under the entry's name")
    func ackNeverReplaces() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try spool.spool.deliverNewFile(Self.claimed, named: FileName("k1@alpha.json"), into: .needsAttention)
        try spool.spool.deliverNewFile(Self.dropped, named: FileName("k1@alpha.json"), into: .failed)
        let item = SpoolItem(name: FileName("k1@alpha.json"), state: .needsAttention, entry: EntryName("k1@alpha.json"))
        _ = try ManualMoves(session: spool.session).acknowledge([item])

        #expect(try spool.spool.read(FileName("k1@alpha.json"), in: .failed, limit: 1 << 20) == Self.claimed)
        #expect(try Self.flagged(spool).bytes == Self.dropped)
    }

    @Test("a 400 whose body reads like courier's words for a transient failure is not sent again by --attention")
    func aServerCannotForgeATransientFailure() throws {
        let server = try LoopbackServer(status: 400, body: "tried once (HTTP 503): the server says so")
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        try spool.dropRecord(id: "forged")
        try spool.runRound()
        #expect(try spool.names(in: .needsAttention) == ["forged@alpha.json"])
        let line = try #require(try spool.ledger().last { $0.event == .needsAttention })
        #expect(!TransientFailure.recorded(in: line), "\(line.detail)")
        let item = SpoolItem(
            name: FileName("forged@alpha.json"), state: .needsAttention, entry: EntryName("forged@alpha.json"))
        #expect(
            !Explanation.explain(item, last: line).contains("unavailable"), "\(Explanation.explain(item, last: line))")

        var round = Round(session: spool.session, configuration: spool.configuration, mode: .foreground)
        round.retryAttention = true
        guard case .ran(let summary) = try round.run(wait: true) else { throw TestFailure("busy") }
        #expect(summary.fromAttention == 0)
        #expect(server.requests.count == 1, "the 400 was not sent again")
    }

    @Test("a tombstone's catalogDeleted line is on disk before its item goes")
    func tombstoneLineBeforeRemoval() throws {
        let spool = try TemporarySpool()
        let catalog = Catalog(name: try TemporarySpool.subscriberName("things"), url: "http://127.0.0.1:9/")
        let store = try CatalogStore(session: spool.session, catalog: catalog, cursor: .version, log: .silent)
        try spool.spool.deliverNewFile(Array("{}".utf8), named: FileName("t1.json"), into: store.directory)
        let page = try CatalogPage.parse(
            Array(#"{"upserts":[],"tombstones":["t1"],"nextCursor":null,"version":2}"#.utf8), catalog: catalog,
            cursor: .version,
            url: "test", page: 1)
        // The first write of the page's commit is its ledger line.
        spool.session.faults = FaultPlan(failing: .write, at: 2, with: Errno(EIO))
        let faulted = store
        var state = CatalogState()
        var report = CatalogSyncReport(session: RoundID(value: "t"))
        #expect(throws: (any Error).self) { try faulted.applyAndAdvance(page, state: &state, report: &report) }
        #expect(try store.directory.contains(FileName("t1.json")), "removed without its ledger line")
    }

    @Test("a catalog page of many upserts is made durable with a few syncs, not one per item")
    func upsertsShareTheirSyncs() throws {
        let spool = try TemporarySpool()
        let catalog = Catalog(name: try TemporarySpool.subscriberName("things"), url: "http://127.0.0.1:9/")
        let counter = FaultPlan()
        spool.session.faults = counter
        let store = try CatalogStore(session: spool.session, catalog: catalog, cursor: .version, log: .silent)
        let upserts = (0..<100).map { #"{"id":"u\#($0)","n":\#($0)}"# }.joined(separator: ",")
        let page = try CatalogPage.parse(
            Array(#"{"upserts":[\#(upserts)],"tombstones":[],"nextCursor":null,"version":2}"#.utf8),
            catalog: catalog, cursor: .version, url: "test", page: 1)
        var state = CatalogState()
        var report = CatalogSyncReport(session: RoundID(value: "t"))
        try store.applyAndAdvance(page, state: &state, report: &report)
        #expect(report.upserts == 100)
        #expect((counter.counts[.sync] ?? 0) <= 8, "\(counter.counts)")
    }

    @Test("releasing a hold syncs through the fault seam, so the sweep can fail it")
    func releaseSyncsThroughTheSeam() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let alpha = try TemporarySpool.subscriberName("alpha")
        try Holding(session: spool.session).hold(alpha, reason: "")
        spool.session.faults = FaultPlan(failing: .sync, at: 2, with: Errno(EIO))
        #expect(throws: (any Error).self) { _ = try Holding(session: spool.session).release(alpha) }
    }
}
