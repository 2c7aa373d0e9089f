import Foundation
import Testing

@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierSupport

/// Issue 23, item 3: a batch server's etags are lines appended to one
/// journal per subscriber by the commit that settles the items, not a
/// file created, fsynced and renamed per entity.
@Suite struct EntityTagJournalTests {
    static let batchy = "batchy"

    static func tag(_ spool: TemporarySpool, _ id: String) throws -> EntityTag? {
        try EntityTagStore(spool: spool.spool).tag(
            of: #require(RecordID(id)), from: TemporarySpool.subscriberName(batchy))
    }

    @Test("a batch of forty entities makes no file per entity, and etag and why read each tag back from the journal")
    func aBatchMakesOneJournalNotAFilePerEntity() throws {
        let spool = try EntityTagTests.spool(try EntityTagTests.server())
        let ids = (0..<40).map { "j-\($0)" }
        for id in ids { try spool.dropRecord(id: id, kind: "order") }
        try spool.runRound()
        #expect(try spool.names(in: .sent).count == 40)
        let folder = spool.path + "/.courier/etags/batchy"
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [".journal"])
        for id in ids {
            let kept = try EntityTagStore(spool: spool.spool).tags(of: #require(RecordID(id)))
            #expect(kept.map(\.tag.etag) == ["v-\(id)"], "\(id)")
            #expect(kept.first?.tag.serverID == "srv-\(id)")
        }
        try spool.drop(#"{"id":"j-3-u1","kind":"order","op":"UPDATE","updates":"j-3","etag":"v-j-3"}"#, as: "u.json")
        try spool.runRound()
        #expect(try Self.tag(spool, "j-3")?.etag == "v-j-3-u1", "the update's line is the last of j-3's")
        let notes = Explanation.serverNotes(
            for: try #require(try spool.spool.resolve("j-3-u1").first),
            history: try spool.ledger().filter { $0.key == "j-3-u1" }, in: spool.spool)
        #expect(
            notes.last?.hasPrefix("etag kept for j-3 from batchy: v-j-3-u1 (given for j-3-u1 at ") == true, "\(notes)")
    }

    @Test("an older courier's etag file per entity is still read, and a journal line of the entity is newer")
    func oldFilesAreReadBehindTheJournal() throws {
        let spool = try EntityTagTests.spool(try EntityTagTests.server())
        try spool.dropRecord(id: "fresh", kind: "order")
        try spool.runRound()
        let folder = try #require(
            try EntityTagStore(spool: spool.spool).folder(for: TemporarySpool.subscriberName(Self.batchy)))
        for (name, etag) in [("legacy", "v-old"), ("fresh", "v-stale")] {
            try folder.openFile(FileName(name), flags: O_WRONLY | O_CREAT | O_EXCL).write(
                Array(#"{"etag":"\#(etag)","key":"\#(name)","server_id":"s-1","time":"2026-11-01T00:00:00Z"}"#.utf8))
        }
        #expect(try Self.tag(spool, "legacy")?.etag == "v-old")
        #expect(try Self.tag(spool, "legacy")?.serverID == "s-1")
        #expect(try Self.tag(spool, "fresh")?.etag == "v-fresh")
    }

    @Test("a line a crash cut short is skipped, and the next append still reads back")
    func aTornLineIsSkipped() throws {
        let spool = try EntityTagTests.spool(try EntityTagTests.server())
        try spool.dropRecord(id: "a-1", kind: "order")
        try spool.runRound()
        let folder = try #require(
            try EntityTagStore(spool: spool.spool).folder(for: TemporarySpool.subscriberName(Self.batchy)))
        try folder.openFile(EntityTagStore.journalName, flags: O_WRONLY | O_APPEND).write(Array("a-2\tv-torn\tsr".utf8))
        try spool.dropRecord(id: "a-3", kind: "order")
        try spool.runRound()
        #expect(try Self.tag(spool, "a-1")?.etag == "v-a-1")
        #expect(try Self.tag(spool, "a-2") == nil)
        #expect(try Self.tag(spool, "a-3")?.etag == "v-a-3")
    }

    @Test("a journal that cannot be opened fails the settling commit before its sent lines: the ledger says sent once")
    func anUnopenableJournalWritesNoSentLine() throws {
        let server = try EntityTagTests.server()
        let spool = try EntityTagTests.spool(server)
        try spool.dropRecord(id: "a-1", kind: "order")
        try spool.runRound()
        // A person makes the journal a directory (or the folder unwritable).
        let path = spool.path + "/.courier/etags/batchy/.journal"
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try spool.dropRecord(id: "a-3", kind: "order")
        #expect(throws: RoundError.self) { try spool.runRound() }
        #expect(try spool.names(in: .sending) == ["a-3@batchy.json"], "the commit moved nothing")
        let sentLines = { try spool.ledger().filter { $0.key == "a-3" && $0.event == .sent }.count }
        #expect(try sentLines() == 0, "a sent line for an entry the commit left in sending/")
        try FileManager.default.removeItem(atPath: path)
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["a-1@batchy.json", "a-3@batchy.json"])
        #expect(try sentLines() == 1)
        #expect(try Self.tag(spool, "a-3")?.etag == "v-a-3")
    }

    @Test("a journal grown to twice what its entities need is rewritten by the commit, every last tag kept")
    func aGrownJournalIsCompacted() throws {
        let spool = try EntityTagTests.spool(try EntityTagTests.server())
        spool.session.tagCompaction.size = 600
        let folder = spool.path + "/.courier/etags/batchy/.journal"
        var largest = 0
        for round in 0..<8 {
            for id in ["c-1", "c-2"] {
                let extra = round == 0 ? "" : #","op":"UPDATE","updates":"\#(id)""#
                try spool.drop(#"{"id":"\#(id)-\#(round)","kind":"order"\#(extra)}"#, as: "\(id)-\(round).json")
            }
            try spool.runRound()
            largest = max(largest, try FileManager.default.attributesOfItem(atPath: folder)[.size] as? Int ?? 0)
        }
        let size = try FileManager.default.attributesOfItem(atPath: folder)[.size] as? Int ?? 0
        #expect(largest >= 600 && size < largest, "largest \(largest), now \(size)")
        #expect(try Self.tag(spool, "c-1")?.etag == "v-c-1-7")
        #expect(try Self.tag(spool, "c-2")?.etag == "v-c-2-7")
        #expect(try spool.spool.tmp.sortedNames().isEmpty)
    }

    @Test("a power cut at any sync of a batch round leaves no etag without its sent line, and the next round keeps all")
    func aPowerCutLeavesEtagsConsistentWithTheLedger() throws {
        let server = try EntityTagTests.server()
        let ids = (0..<6).map { "p-\($0)" }
        func spool() throws -> TemporarySpool {
            let spool = try EntityTagTests.spool(server)
            for id in ids { try spool.dropRecord(id: id, kind: "order") }
            return spool
        }
        let counting = try spool()
        let counter = FaultPlan()
        counting.session.faults = counter
        try counting.runRound()
        let syncs = counter.counts[.sync] ?? 0
        #expect(syncs >= 4, "\(counter.counts)")
        for sync in 1...syncs {
            let label = "power cut at sync #\(sync) of \(syncs)"
            let cut = try spool()
            cut.session.faults = FaultPlan(powerCutAtSync: sync)
            _ = try? cut.runRound()
            let sent = Set(try cut.ledger().filter { $0.event == .sent }.map(\.key))
            for id in ids {
                if let kept = try Self.tag(cut, id) {
                    #expect(sent.contains(kept.key), "\(label): \(id)'s etag kept without its sent line")
                    #expect(kept.etag == "v-\(id)", "\(label)")
                }
            }
            let rebooted = try SpoolSession(path: cut.path, worker: nil)
            for _ in 0..<2 {
                _ = try Round(session: rebooted, configuration: cut.configuration, mode: .background).run(wait: true)
            }
            #expect(try cut.names(in: .sent) == ids.map { "\($0)@batchy.json" }, "\(label)")
            // A cut after the ledger's fsync and before the journal's may
            // lose the batch's tags (the ledger's lines still show them),
            // never keep a wrong one or garble the journal for the rounds after.
            for id in ids {
                if let kept = try Self.tag(cut, id) { #expect(kept.etag == "v-\(id)", "\(label): \(id)") }
            }
            try cut.dropRecord(id: "after", kind: "order")
            _ = try Round(session: rebooted, configuration: cut.configuration, mode: .background).run(wait: true)
            #expect(try Self.tag(cut, "after")?.etag == "v-after", "\(label)")
        }
    }
}
