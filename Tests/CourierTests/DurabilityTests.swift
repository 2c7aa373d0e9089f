import Foundation
import Glibc
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

/// A dropped file's bytes are on disk before it becomes an entry, the
/// ledger ends in whole lines after any failure, and intake's memory is
/// bounded by bytes, not only by count.
@Suite struct DurabilityTests {

    static func dayFile(_ spool: TemporarySpool) throws -> String {
        let names = try Ledger.dayFiles(in: spool.spool.ledgerDirectory)
        return spool.path + "/ledger/" + (try #require(names.last)).name.description
    }

    static func line(_ key: String, _ time: Timestamp = .now()) -> LedgerLine {
        LedgerLine(time: time, round: "r", subscriber: "alpha", key: key, event: .sent, detail: "ok")
    }

    @Test("the half line a dead writer left at a ledger's end is taken away: the file holds whole lines only")
    func aTornLastLineDoesNotSwallowTheNextOne() throws {
        let spool = try TemporarySpool()
        let ledger = Ledger(directory: spool.spool.ledgerDirectory)
        try ledger.append(Self.line("first"))
        let path = try Self.dayFile(spool)
        // What kill -9 in the middle of a write(2) leaves: the start of a
        // line and no newline.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("2026-11-30T07:00:00Z\tr\talpha\ttorn\tse".utf8))
        try handle.close()

        let later = Ledger(directory: spool.spool.ledgerDirectory)
        try later.append(Self.line("after"))
        var keys: [String] = []
        let malformed = try Ledger.read(from: spool.spool.ledgerDirectory) { keys.append($0.key) }
        #expect(keys == ["first", "after"])
        #expect(malformed == 0, "no torn line is left in the file")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            !text.contains("torn") && text.split(separator: "\n").allSatisfy { $0.split(separator: "\t").count == 9 })
    }

    @Test("a failed append leaves the ledger as it was, ending in a whole line")
    func aFailedAppendIsTakenBack() throws {
        let spool = try TemporarySpool()
        // The second append's one write gets half its bytes out, then ENOSPC.
        let faults = FaultPlan(failing: .write, at: 2, with: .noSpace, tearing: true)
        let ledger = Ledger(directory: spool.spool.ledgerDirectory, faults: faults)
        try ledger.append(Self.line("kept"))
        let before = try String(contentsOfFile: try Self.dayFile(spool), encoding: .utf8)
        #expect(throws: SpoolError.self) {
            try ledger.append([Self.line("one"), Self.line("two"), Self.line("three")])
        }
        let after = try String(contentsOfFile: try Self.dayFile(spool), encoding: .utf8)
        #expect(after == before)
        #expect(after.hasSuffix("\n"))
    }

    @Test("a torn last line is not counted as malformed while it may still be being written")
    func readersTolerateOneTornLastLine() throws {
        let spool = try TemporarySpool()
        try Ledger(directory: spool.spool.ledgerDirectory).append(Self.line("whole"))
        let path = try Self.dayFile(spool)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("2026-11-30T07:00:00Z\tr\tal".utf8))
        try handle.close()
        var keys: [String] = []
        let malformed = try Ledger.read(from: spool.spool.ledgerDirectory) {
            keys.append($0.key)
        }
        #expect(keys == ["whole"])
        #expect(malformed == 0)
    }

    @Test("where syncfs does nothing (FUSE) intake fsyncs each dropped file of a group itself")
    func onFUSEEachDroppedFileIsSynced() throws {
        #expect(!DirectoryHandle.syncfsReachesDisk(fileSystemType: DirectoryHandle.fuseMagic))
        #expect(DirectoryHandle.syncfsReachesDisk(fileSystemType: 0xEF53), "ext4")
        func syncs(reachingDisk: Bool) throws -> Int {
            let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")]
            )
            spool.spool.syncfsReachesDisk = reachingDisk
            for index in 0..<5 { try spool.dropRecord(id: "f-\(index)") }
            let counter = FaultPlan()
            spool.session.faults = counter
            _ = try Intake(
                session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())
            )
            .run()
            return counter.counts[.sync] ?? 0
        }
        #expect(
            try syncs(reachingDisk: false) - syncs(reachingDisk: true) == 4, "five files: one syncfs, or five fsyncs")
    }

    @Test("a round's summary has its bytes fsynced and is renamed into .courier/ with no folder fsynced")
    func theRoundSummaryIsAReport() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let counter = FaultPlan()
        spool.session.faults = counter
        try spool.runRound()
        // An empty round writes its summary and nothing else: had its tmp/
        // and .courier/ been fsynced as state's are, three.
        #expect(counter.counts[.sync] == 1, "\(counter.counts)")
        #expect(counter.counts[.rename] == 1, "\(counter.counts)")
        #expect(Round.lastSummary(in: spool.spool) != nil)
        #expect(try spool.spool.tmp.sortedNames().isEmpty)
    }

    @Test(
        "a power cut after a round's summary was renamed into .courier/ brings back the round before's, whole, and its staged copy to tmp/"
    )
    func aPowerCutBringsBackTheSummaryBefore() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let first = try spool.runRound()
        let summary = spool.path + "/.courier/last-round.json"
        let before = try Data(contentsOf: URL(fileURLWithPath: summary))
        // The second round's one sync is its summary's; the cut comes at
        // the exit status's, after the summary's rename, no folder synced.
        let cut = FaultPlan(powerCutAtSync: 2)
        spool.session.faults = cut
        let second = try spool.runRound()
        #expect(second.round != first.round)
        #expect(Round.lastSummary(in: spool.spool)?.round == second.round)
        #expect(throws: SpoolError.self) {
            try MetricsFile(path: spool.path + "/courier.prom", session: spool.session).write(
                summary: second, exitStatus: 0)
        }
        #expect(cut.powerCut?.happened == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: summary)) == before, "the round before's, byte for byte")
        #expect(Round.lastSummary(in: spool.spool)?.round == first.round)
        // The summary's bytes were synced before its rename: its staged
        // copy is back in tmp/, whole (the exit status's, cut at its own
        // sync, was taken away by the failed commit).
        let staged = try spool.spool.tmp.sortedNames()
        #expect(staged.count == 1 && staged.allSatisfy { $0.description.hasSuffix("last-round.json") }, "\(staged)")
        for name in staged {
            let bytes = try spool.spool.tmp.openFile(name, flags: O_RDONLY).read(upTo: 1 << 20)
            let decoded = try JSONDecoder().decode(RoundSummary.self, from: Data(bytes))
            #expect(decoded.round == second.round)
        }
        // The machine is back: the next round replaces the summary.
        spool.session.faults = nil
        let third = try spool.runRound()
        #expect(Round.lastSummary(in: spool.spool)?.round == third.round)
    }

    /// The metrics file is written the one atomic way (`writeAtomically`):
    /// staged with its own fsync, renamed, and its directory fsynced; a
    /// failed rename leaves the old file and no staged leftover.
    @Test func theMetricsFileIsSyncedAndRenamed() throws {
        let spool = try TemporarySpool(subscribers: [])
        let directory = TemporaryDirectory("metrics")
        let path = directory.path + "/courier.prom"
        let counter = FaultPlan()
        spool.session.faults = counter
        try MetricsFile(path: path, session: spool.session).write(summary: nil, exitStatus: 0)
        // The round's exit status (kept in .courier/ for later refreshes, a
        // report: its bytes synced, no folder) and the metrics file (synced,
        // renamed, and its directory synced).
        #expect(counter.counts[.sync] == 3, "each file, and the metrics file's directory: \(counter.counts)")
        #expect(counter.counts[.rename] == 2)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("courier_items"))

        try Data("old\n".utf8).write(to: URL(fileURLWithPath: path))
        // The second rename: the metrics file's, after the exit status's.
        spool.session.faults = FaultPlan(failing: .rename, at: 2, with: .noSpace)
        #expect(throws: SpoolError.self) {
            try MetricsFile(path: path, session: spool.session).write(summary: nil, exitStatus: 0)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["courier.prom"])
    }
}
