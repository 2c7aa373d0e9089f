import Glibc
import Testing

@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierSpool
@testable import CourierSupport

/// A ledger that several workers share: each appends to its own day file,
/// and every reader takes all of a day's files as that day's ledger.
@Suite struct SharedLedgerTests {
    static func time(_ text: String) throws -> Timestamp {
        guard let time = Timestamp(rfc3339: text) else { throw TestFailure("\(text) is not RFC 3339") }
        return time
    }

    static func line(_ time: String, _ key: String, _ event: LedgerEvent = .accepted, subscriber: String = "alpha")
        throws -> LedgerLine
    {
        LedgerLine(time: try Self.time(time), round: "r", subscriber: subscriber, key: key, event: event)
    }

    static func fileNames(_ spool: TemporarySpool) throws -> [String] {
        try spool.spool.ledgerDirectory.sortedNames().map(\.description)
    }

    @Test("a ledger with a worker id appends to YYYY-MM-DD.WORKER.tsv")
    func aWorkerWritesItsOwnDayFile() throws {
        let spool = try TemporarySpool()
        let ledger = Ledger(directory: spool.spool.ledgerDirectory, worker: try WorkerID("host-1.example"))
        try ledger.append([
            try Self.line("2026-11-29T23:59:59.999Z", "k1"), try Self.line("2026-11-30T00:00:00.000Z", "k2"),
        ])
        #expect(try Self.fileNames(spool) == ["2026-11-29.host-1.example.tsv", "2026-11-30.host-1.example.tsv"])
        #expect(try Ledger.dayFiles(in: spool.spool.ledgerDirectory).map(\.day) == ["2026-11-29", "2026-11-30"])
        #expect(try spool.ledger().map(\.key) == ["k1", "k2"])
    }

    @Test("a ledger without a worker id keeps the name YYYY-MM-DD.tsv")
    func aSingleWriterKeepsTheDayName() throws {
        let spool = try TemporarySpool()
        try Ledger(directory: spool.spool.ledgerDirectory).append(try Self.line("2026-11-30T07:00:00.000Z", "k"))
        #expect(try Self.fileNames(spool) == ["2026-11-30.tsv"])
    }

    @Test(
        "a bad worker id is refused with a message naming it",
        arguments: [
            ("", "is empty"), (".hidden", "starts with '.'"), ("a/b", "0x2f"), ("a b", "0x20"), ("tab\there", "0x9"),
            ("new\nline", "0xa"), (String(repeating: "w", count: 65), "65 bytes long"), ("wörker", "0xc3"),
        ])
    func aBadWorkerIDIsRefused(text: String, problem: String) {
        #expect(throws: WorkerIDError.self) { try WorkerID(text) }
        do {
            _ = try WorkerID(text)
        } catch let error {
            #expect(error.description.contains("` is not a worker id: "), "\(error)")
            #expect(!error.description.contains { $0.isNewline }, "\(error)")
            #expect(error.description.contains(problem), "\(error)")
        }
    }

    @Test("worker ids of letters, digits, '-', '_' and '.' not first, up to 64 bytes, are taken")
    func goodWorkerIDsAreTaken() throws {
        for text in ["a", "host-1", "Node_7.example.org", "a.", String(repeating: "w", count: 64)] {
            #expect(try WorkerID(text).value == text)
        }
    }

    @Test("ledger file names parse back; a day's own file comes before its workers' files")
    func ledgerFileNamesParse() throws {
        let spool = try TemporarySpool()
        let directory = spool.spool.ledgerDirectory
        for name in [
            "2026-11-30.b.tsv", "2026-11-30.tsv", "2026-11-30.a.tsv", "2026-11-29.z.tsv", "2026-11-30..tsv",
            "2026-11-30.tsv.tmp", "2026-11-30-x.tsv", "notes.tsv", "2026-13-01.tsv",
        ] {
            _ = try directory.openFile(FileName(name), flags: O_WRONLY | O_CREAT, mode: 0o640)
        }
        #expect(
            try Ledger.dayFiles(in: directory).map(\.name.description) == [
                "2026-11-29.z.tsv", "2026-11-30.tsv", "2026-11-30.a.tsv", "2026-11-30.b.tsv",
            ])
        #expect(
            try Ledger.days(in: directory) == [
                LedgerDay(day: "2026-11-29", files: [FileName("2026-11-29.z.tsv")]),
                LedgerDay(
                    day: "2026-11-30",
                    files: [FileName("2026-11-30.tsv"), FileName("2026-11-30.a.tsv"), FileName("2026-11-30.b.tsv")]),
            ])
        #expect(LedgerFileName(FileName("2026-11-30.a.b.tsv"))?.worker?.value == "a.b")
    }

    /// Two workers, `a` and `b`, and a writer without a worker id, writing
    /// by turns: 2026-11-29 in b's file only, then 2026-11-30 in all three,
    /// with three lines of one time (the plain file's first, then a's, b's).
    static func sharedLedger() throws -> TemporarySpool {
        let spool = try TemporarySpool()
        let directory = spool.spool.ledgerDirectory
        let plain = Ledger(directory: directory)
        let a = Ledger(directory: directory, worker: try WorkerID("a"))
        let b = Ledger(directory: directory, worker: try WorkerID("b"))
        try b.append(try line("2026-11-29T23:59:59.999Z", "y1"))
        try a.append(try line("2026-11-30T07:00:00.000Z", "k1"))
        try b.append(try line("2026-11-30T07:00:01.000Z", "k2", .sent))
        try a.append(try line("2026-11-30T07:00:02.000Z", "k3"))
        try b.append(try line("2026-11-30T07:00:03.000Z", "k4"))
        try b.append(try line("2026-11-30T07:00:04.000Z", "k6"))
        try a.append(try line("2026-11-30T07:00:04.000Z", "k5"))
        try plain.append(try line("2026-11-30T07:00:04.000Z", "k0"))
        try a.append(try line("2026-11-30T07:00:05.000Z", "k2", .retry, subscriber: "beta"))
        return spool
    }

    static let mergedKeys = ["y1", "k1", "k2", "k3", "k4", "k0", "k5", "k6", "k2"]

    @Test("reading the ledger merges a day's files by time: equal times keep the day's own file first, then a's, b's")
    func readingMergesByTime() throws {
        let spool = try Self.sharedLedger()
        #expect(try spool.ledger().map(\.key) == Self.mergedKeys)
        // And the same with chunks of about a line: lines across a chunk's
        // end are read whole.
        let directory = spool.spool.ledgerDirectory
        for chunk in [60, 100] {
            var keys: [String] = []
            var merged = try MergedLines(
                try Ledger.days(in: directory)[1].files.map { ($0, 0) }, in: directory, chunk: chunk,
                unterminated: true)
            try merged.forEach { line, _ in
                keys += LedgerLine(parsing: Substring(String(decoding: line, as: UTF8.self))).map { [$0.key] } ?? []
            }
            #expect(keys == Array(Self.mergedKeys.dropFirst()), "\(chunk)")
        }
    }

    @Test("log, log -n and why see both workers' lines, in time order")
    func logAndWhySeeBothWorkers() throws {
        let spool = try Self.sharedLedger()
        let history = History(spool: spool.spool)
        var keys: [String] = []
        try history.run(LogQuery(filter: History.Filter(since: try Self.time("2026-11-30T00:00:00Z")))) {
            keys.append($0.key)
        }
        #expect(keys == Array(Self.mergedKeys.dropFirst()))
        keys = []
        try history.run(LogQuery(filter: History.Filter(), last: 3)) { keys.append($0.key) }
        #expect(keys == ["k5", "k6", "k2"])
        // why: one key's story, found by the byte search in both files.
        let story = try history.lines(History.Filter(key: "k2"))
        #expect(story.map(\.event) == [.sent, .retry])
        #expect(story.map(\.subscriber) == ["alpha", "beta"])
        #expect(try history.lines(History.Filter(subscriber: "alpha", key: "k2")).map(\.event) == [.sent])
    }

    @Test("a malformed line in a worker's file is counted once; its last line without a newline is read if whole")
    func malformedLinesInWorkerFilesAreCounted() throws {
        let spool = try Self.sharedLedger()
        let directory = spool.spool.ledgerDirectory
        let file = try directory.openFile(FileName("2026-11-30.a.tsv"), flags: O_WRONLY | O_APPEND)
        try file.write(Array("not a ledger line k9\n".utf8))
        try file.write(Array(try Self.line("2026-11-30T08:00:00.000Z", "k9").formatted.utf8.dropLast()))
        var keys: [String] = []
        #expect(try Ledger.read(from: directory) { keys.append($0.key) } == 1)
        #expect(keys == Self.mergedKeys + ["k9"])
        keys = []
        #expect(try Ledger.read(from: directory, containing: "k9") { keys.append($0.key) } == 1)
        #expect(keys == ["k9"])
    }

    @Test("readNew and the event counters read each line once across two files appended by turns, past midnight")
    func readNewCountsEachLineOnce() throws {
        let spool = try TemporarySpool()
        let directory = spool.spool.ledgerDirectory
        let a = Ledger(directory: directory, worker: try WorkerID("a"))
        let b = Ledger(directory: directory, worker: try WorkerID("b"))
        let start = try Self.time("2026-11-30T23:59:50Z")
        var position: LedgerPosition?
        var written: [String] = []
        var read: [String] = []
        for index in 0..<30 {
            // b's clock is three seconds behind a's: b still writes
            // 2026-11-30 after a has begun 2026-12-01.
            let line = LedgerLine(
                time: start + .seconds(index - (index % 2) * 3), round: "r", subscriber: "alpha", key: "k\(index)",
                event: .accepted)
            try (index % 2 == 0 ? a : b).append(line)
            written.append(line.key)
            if index % 3 != 1 {
                position = try Ledger.readNew(after: position, in: directory) { read.append($0.key) }
                _ = try EventCounters(session: spool.session).update()
            }
        }
        position = try Ledger.readNew(after: position, in: directory) { read.append($0.key) }
        #expect(read.sorted() == written.sorted())
        #expect(try EventCounters(session: spool.session).update()["alpha"]?["accepted"] == 30)
        #expect(position?.day == "2026-11-30", "yesterday is still read, for a late line")
        #expect(
            position?.offsets.keys.sorted() == [
                "2026-11-30.a.tsv", "2026-11-30.b.tsv", "2026-12-01.a.tsv", "2026-12-01.b.tsv",
            ])
        var again: [String] = []
        #expect(try Ledger.readNew(after: position, in: directory) { again.append($0.key) } == position)
        #expect(again.isEmpty)
    }

    @Test("an event-counts file written before workers still reads: its offset is in the day's own file")
    func anOldEventCountsFileStillReads() throws {
        let spool = try TemporarySpool()
        let directory = spool.spool.ledgerDirectory
        let plain = Ledger(directory: directory)
        try plain.append([
            try Self.line("2026-11-30T07:00:00.000Z", "k1"), try Self.line("2026-11-30T07:00:01.000Z", "k2"),
        ])
        let size = try #require(try directory.status(of: FileName("2026-11-30.tsv"))).size
        try spool.spool.writeControlFile(
            "event-counts.json",
            Array(#"{"position":{"day":"2026-11-30","offset":\#(size)},"counts":{"alpha":{"accepted":2}}}"#.utf8))
        try Ledger(directory: directory, worker: try WorkerID("a")).append(
            try Self.line("2026-11-30T07:00:02.000Z", "k3"))
        try plain.append(try Self.line("2026-11-30T07:00:03.000Z", "k4"))
        #expect(try EventCounters(session: spool.session).update()["alpha"]?["accepted"] == 4)
        #expect(try EventCounters(session: spool.session).update()["alpha"]?["accepted"] == 4)
    }

    @Test("log -f follows two workers' files, into the next day, and shows a late line of yesterday once")
    func followingReadsEveryWorker() throws {
        let spool = try TemporarySpool()
        let directory = spool.spool.ledgerDirectory
        let a = Ledger(directory: directory, worker: try WorkerID("a"))
        let b = Ledger(directory: directory, worker: try WorkerID("b"))
        // A day before the window, never shown.
        try b.append(try Self.line("2026-11-29T12:00:00.000Z", "old"))
        var follower = LedgerFollower(
            spool: spool.spool, filter: History.Filter(since: try Self.time("2026-11-30T00:00:00Z")))
        func poll() throws -> [String] {
            var keys: [String] = []
            try follower.poll { keys.append($0.key) }
            return keys
        }
        #expect(try poll().isEmpty)
        try a.append(try Self.line("2026-11-30T23:59:58.000Z", "k1"))
        #expect(try poll() == ["k1"])
        try b.append(try Self.line("2026-11-30T23:59:57.000Z", "k2"))
        try a.append(try Self.line("2026-12-01T00:00:01.000Z", "k3"))
        #expect(try poll() == ["k2", "k3"])
        try b.append(try Self.line("2026-11-30T23:59:59.500Z", "late"))
        try b.append(try Self.line("2026-12-01T00:00:02.000Z", "k5"))
        try a.append(try Self.line("2026-12-01T00:00:02.000Z", "k4"))
        #expect(try poll() == ["late", "k4", "k5"])
        #expect(try poll().isEmpty)
    }

    @Test("list's last event is an item's latest line in time across the workers' files, the later file's at a tie")
    func listSeesTheLatestLineOfEveryWorker() throws {
        let spool = try TemporarySpool()
        let directory = spool.spool.ledgerDirectory
        let plain = Ledger(directory: directory)
        let a = Ledger(directory: directory, worker: try WorkerID("a"))
        let b = Ledger(directory: directory, worker: try WorkerID("b"))
        try a.append(try Self.line("2026-11-29T10:00:00.000Z", "old", .needsAttention))
        // Read file by file, b's earlier retry would come last.
        try a.append(try Self.line("2026-11-30T10:00:06.000Z", "k", .sent))
        try b.append(try Self.line("2026-11-30T10:00:05.000Z", "k", .retry))
        // At one time: the day's own file, then a's, then b's.
        try b.append(try Self.line("2026-11-30T11:00:00.000Z", "tie", .sent))
        try a.append(try Self.line("2026-11-30T11:00:00.000Z", "tie", .retry))
        try plain.append(try Self.line("2026-11-30T11:00:00.000Z", "tie", .accepted))
        // A newer day's line wins, whichever file.
        try b.append(try Self.line("2026-11-29T09:00:00.000Z", "new", .sent))
        try plain.append(try Self.line("2026-11-30T09:00:00.000Z", "new", .deferred))
        for chunk in [4 << 20, 60] {
            let events = try LastEvents(directory: directory, chunk: chunk)
            #expect(try events.last(subscriber: SubscriberName("alpha"), key: "k")?.event == .sent, "\(chunk)")
            #expect(try events.last(subscriber: SubscriberName("alpha"), key: "tie")?.event == .sent, "\(chunk)")
            #expect(try events.last(subscriber: SubscriberName("alpha"), key: "new")?.event == .deferred, "\(chunk)")
            #expect(
                try events.last(subscriber: SubscriberName("alpha"), key: "old")?.event == .needsAttention, "\(chunk)")
            #expect(try events.last(subscriber: SubscriberName("alpha"), key: "never") == nil, "\(chunk)")
        }
    }

    @Test("prune removes every file of a day past retention, by the day in its name, and names each file")
    func pruneRemovesAllOfADaysFiles() throws {
        let spool = try Self.sharedLedger()
        let directory = spool.spool.ledgerDirectory
        try Ledger(directory: directory, worker: try WorkerID("a")).append(
            try Self.line("2026-11-29T08:00:00.000Z", "y0"))
        try Ledger(directory: directory).append(try Self.line("2026-11-29T09:00:00.000Z", "y2"))
        let now = try Self.time("2026-11-30T12:00:00Z")
        let dry = try Pruner(session: spool.session, retention: .seconds(12 * 3600), now: now, dryRun: true).run()
        #expect(dry.ledgerFiles == ["2026-11-29.tsv", "2026-11-29.a.tsv", "2026-11-29.b.tsv"])
        #expect(try Ledger.dayFiles(in: directory).count == 6)
        let report = try Pruner(session: spool.session, retention: .seconds(12 * 3600), now: now, dryRun: false).run()
        #expect(report.ledgerFiles == dry.ledgerFiles)
        #expect(
            try Self.fileNames(spool) == ["2026-11-30.a.tsv", "2026-11-30.b.tsv", "2026-11-30.tsv"])
        #expect(try spool.ledger().map(\.key) == Array(Self.mergedKeys.dropFirst()))
    }

    @Test("readNew leaves a worker's half-written line for the next look, and reads a file cut shorter from its start")
    func readNewWaitsForWholeLines() throws {
        let spool = try Self.sharedLedger()
        let directory = spool.spool.ledgerDirectory
        var keys: [String] = []
        var position = try Ledger.readNew(after: nil, in: directory) { keys.append($0.key) }
        #expect(keys == Self.mergedKeys)
        let text = Array(try Self.line("2026-11-30T08:00:00.000Z", "half").formatted.utf8)
        let file = try directory.openFile(FileName("2026-11-30.b.tsv"), flags: O_WRONLY | O_APPEND)
        try file.write(text.prefix(30))
        keys = []
        position = try Ledger.readNew(after: position, in: directory) { keys.append($0.key) }
        #expect(keys.isEmpty)
        try file.write(text.dropFirst(30))
        position = try Ledger.readNew(after: position, in: directory) { keys.append($0.key) }
        #expect(keys == ["half"])
        // Replaced by hand with fewer bytes than were read: read again.
        try file.truncate(to: 0)
        try file.write(Array(try Self.line("2026-11-30T09:00:00.000Z", "anew").formatted.utf8))
        keys = []
        position = try Ledger.readNew(after: position, in: directory) { keys.append($0.key) }
        #expect(keys == ["anew"])
    }
}
