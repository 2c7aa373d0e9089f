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

/// Files dropped into queued/ under any name, good and bad.
@Suite struct IntakeTests {
    /// Record `id` dropped and dated `written`, then intake alone: its
    /// entry's status in queued/.
    private func entryTakenIn(_ spool: TemporarySpool, id: String, written: Timestamp) throws -> FileStatus? {
        try spool.dropRecord(id: id)
        try spool.spool.directory(.queued).setModified(FileName("\(id).json"), to: written)
        _ = try Intake(
            session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())
        )
        .run()
        return try spool.spool.directory(.queued).status(of: FileName("\(id)@alpha.json"))
    }

    @Test("an entry's modification time is its intake time, not the dropped file's, in queued/ and claimed at birth")
    func anEntryIsStampedWithItsIntakeTime() throws {
        let (spool, _) = try Self.spoolWithServer()
        let monthAgo = Timestamp.now() - .seconds(30 * 86_400)
        let hourAgo = Timestamp.now() - .seconds(3_600)
        let queued = try #require(try entryTakenIn(spool, id: "waits", written: monthAgo))
        #expect(queued.modified > hourAgo)
        try spool.dropRecord(id: "sent")
        try spool.spool.directory(.queued).setModified(FileName("sent.json"), to: monthAgo)
        try spool.runRound()
        let sent = try #require(try spool.spool.directory(.sent).status(of: FileName("sent@alpha.json")))
        #expect(sent.modified > hourAgo)
    }

    @Test(
        "a dropped file written in the minute before intake keeps its own time, which is its intake time to the minute")
    func aFreshDropKeepsItsOwnTime() throws {
        let (spool, _) = try Self.spoolWithServer()
        let written = Timestamp(secondsSinceEpoch: Timestamp.now().secondsSinceEpoch - 10, nanoseconds: 123_456_789)
        let entry = try #require(try entryTakenIn(spool, id: "fresh", written: written))
        #expect(entry.modified == written)
    }

    @Test(
        "a dropped file dated ahead, or holding a deferral's nanoseconds, is stamped with the intake time",
        arguments: [(3_600, 0), (-10, 7)])
    func anOddlyDatedDropIsStamped(secondsFromNow: Int64, nanoseconds: Int64) throws {
        let (spool, _) = try Self.spoolWithServer()
        let before = Timestamp.now()
        let written = Timestamp(
            secondsSinceEpoch: before.secondsSinceEpoch + secondsFromNow, nanoseconds: nanoseconds)
        let entry = try #require(try entryTakenIn(spool, id: "odd", written: written))
        #expect(entry.modified != written)
        #expect(entry.modified >= before - .seconds(1) && entry.modified <= Timestamp.now())
        #expect(DeferralStamp(modified: entry.modified) == nil)
    }

    @Test("a file's own time stands for its intake time only within the minute before it, and never without a status")
    func ownTimeWindow() {
        let now = Timestamp(secondsSinceEpoch: 1_800_000_000, nanoseconds: 500_000_000)
        func keeps(_ ago: Duration) -> Bool {
            IntakeCommit.keepsItsOwnTime(modified: now - ago, at: now)
        }
        #expect(keeps(.zero))
        #expect(keeps(IntakeCommit.freshness))
        #expect(!keeps(IntakeCommit.freshness + .milliseconds(1)))
        #expect(!keeps(.seconds(-1)))
        #expect(!IntakeCommit.keepsItsOwnTime(modified: nil, at: now))
        let stamped = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch - 5, nanoseconds: 3)
        #expect(!IntakeCommit.keepsItsOwnTime(modified: stamped, at: now), "a deferral's nanoseconds")
    }

    static func spoolWithServer(kinds: [String: Set<String>?] = ["alpha": nil]) throws -> (
        TemporarySpool, LoopbackServer
    ) {
        let server = try LoopbackServer(status: 201)
        let subscribers = try kinds.keys.sorted().map { name in
            try TemporarySpool.subscriber(name, url: server.url, kinds: kinds[name] ?? nil)
        }
        let spool = try TemporarySpool(subscribers: subscribers)
        spool.companions.append(server)
        return (spool, server)
    }

    @Test func oddNamesAreTakenInWhole() throws {
        let (spool, server) = try Self.spoolWithServer()
        try spool.drop(#"{"id":"a","kind":"sleep"}"#, as: "with spaces and ünïcode.json")
        try spool.drop(#"{"id":"b","kind":"sleep"}"#, as: "no-extension")
        try spool.drop(Array(#"{"id":"c","kind":"sleep"}"#.utf8), as: FileName(bytes: [0x62, 0x61, 0x64, 0xFF, 0xFE]))
        try spool.drop(#"{"id":"d","kind":"sleep"}"#, as: String(repeating: "n", count: 255))
        try spool.drop(#"{"id":"ignored","kind":"sleep"}"#, as: ".hidden-editor-copy")
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["a@alpha.json", "b@alpha.json", "c@alpha.json", "d@alpha.json"])
        #expect(try spool.names(in: .queued).isEmpty)
        #expect(server.requests.count == 4)
        #expect(FileManager.default.fileExists(atPath: spool.path + "/queued/.hidden-editor-copy"))
    }

    @Test func fanOutFollowsKindsAndSubscribers() throws {
        let (spool, _) = try Self.spoolWithServer(kinds: [
            "alpha": ["sleep", "workout"], "beta": ["workout"], "gamma": nil,
        ])
        try spool.dropRecord(id: "s1", kind: "sleep")
        try spool.dropRecord(id: "w1", kind: "workout")
        try spool.dropRecord(id: "n1", kind: "note", extra: #","subscribers":["beta"]"#)
        try spool.runRound()
        #expect(
            try spool.names(in: .sent) == [
                "n1@beta.json", "s1@alpha.json", "s1@gamma.json", "w1@alpha.json", "w1@beta.json", "w1@gamma.json",
            ], "\((try? spool.ledgerText()) ?? "")")
    }

    @Test func recordsNobodyTakesAreFlagged() throws {
        let (spool, _) = try Self.spoolWithServer(kinds: ["alpha": ["sleep"]])
        try spool.dropRecord(id: "x", kind: "note")
        try spool.dropRecord(id: "y", kind: "sleep", extra: #","subscribers":["zeta"]"#)
        try spool.runRound()
        let flagged = try spool.names(in: .needsAttention)
        #expect(flagged.count == 2)
        let details = try spool.ledger().filter { $0.event == .invalid }.map(\.detail)
        #expect(details.contains { $0.contains("no subscriber takes kind note") })
        #expect(details.contains { $0.contains("names zeta, which is not configured") })
    }

    @Test func invalidFilesAreKeptUnchangedUnderASafeName() throws {
        let (spool, _) = try Self.spoolWithServer()
        let bad = #"{"id":"../../etc/passwd","kind":"sleep"}"#
        try spool.drop(bad, as: "evil@name #1.json")
        try spool.runRound()
        let flagged = try spool.names(in: .needsAttention)
        #expect(flagged.count == 1)
        let name = try #require(flagged.first)
        #expect(name.hasPrefix("invalid-") && name.hasSuffix("-evil_name__1.json"))
        #expect(try String(contentsOfFile: spool.path + "/needsAttention/" + name, encoding: .utf8) == bad)
        let line = try #require(try spool.ledger().first { $0.event == .invalid })
        #expect(line.key == name)
        #expect(line.detail.contains("id starts with '.'") || line.detail.contains("not [A-Za-z0-9._:-]"))
        #expect(line.detail.contains("evil@name #1.json"))
        // A person can ask for it by the name the script gave it.
        #expect(try spool.spool.resolve("evil@name #1.json").map(\.name.description) == [name])
    }

    @Test("where the listing does not give a file's kind, intake asks lstat before it opens anything")
    func kindsUnknownToTheListingAreLookedUp() throws {
        let (spool, _) = try Self.spoolWithServer()
        #expect(mkfifo(spool.path + "/queued/fifo.json", 0o644) == 0)
        try spool.dropRecord(id: "fine")
        let intake = Intake(
            session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now()))
        var unsettled: [EntryName: [UInt8]] = [:]
        var report = IntakeReport()
        var lookup = EntryLookup()
        #expect(
            try intake.take(
                FileName("fifo.json"), kind: nil, unsettled: &unsettled, lookup: &lookup, into: &report)
                == nil)
        #expect(report.flagged.count == 1)
        let fine = try intake.take(
            FileName("fine.json"), kind: nil, unsettled: &unsettled, lookup: &lookup, into: &report)
        #expect(fine?.entries.map(\.description) == ["fine@alpha"])
        let stream = try spool.spool.directory(.queued).entries()
        while let name = try stream.next() {
            #expect(stream.lastKind == .regular, "\(name): ext4 gives d_type")
        }
    }

    @Test func strangeFilesAreFlaggedNeverFollowed() throws {
        let (spool, server) = try Self.spoolWithServer()
        let outside = TemporaryDirectory("outside")
        try outside.write(#"{"id":"secret","kind":"sleep"}"#, to: "target.json")
        let queued = spool.path + "/queued/"
        #expect(symlink(outside.path + "/target.json", queued + "link.json") == 0)
        #expect(mkfifo(queued + "fifo.json", 0o644) == 0)
        #expect(mkdir(queued + "a-directory", 0o755) == 0)
        let socketPath = queued + "socket.json"
        let socketFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in socketPath.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        defer { close(socketFD) }
        try spool.dropRecord(id: "fine")

        let summary = try spool.runRound()
        #expect(summary.invalid == 4)
        #expect(try spool.names(in: .sent) == ["fine@alpha.json"])
        #expect(server.requests.count == 1)
        // The link's target was not read, moved or sent.
        #expect(FileManager.default.fileExists(atPath: outside.path + "/target.json"))
        let reasons = try spool.ledger().filter { $0.event == .invalid }.map(\.detail)
        for kind in ["symbolic link", "FIFO", "directory", "socket"] {
            #expect(reasons.contains { $0.contains("not a regular file (\(kind))") }, "\(kind)")
        }
        #expect(try spool.names(in: .needsAttention).count == 4)
    }

    @Test func emptyAndNonUTF8FilesAreFlagged() throws {
        let (spool, _) = try Self.spoolWithServer()
        try spool.drop([], as: FileName("empty.json"))
        try spool.drop([0x7B, 0xC3, 0x28, 0x7D], as: FileName("latin.json"))
        let summary = try spool.runRound()
        #expect(summary.invalid == 2)
    }

    @Test func theSettleRuleWaitsForHalfWrittenFiles() throws {
        let (spool, _) = try Self.spoolWithServer()
        spool.configuration.settle = .seconds(5)
        try spool.drop(#"{"id":"half","ki"#, as: "copying.json")
        var summary = try spool.runRound()
        #expect(summary.settling == 1)
        #expect(try spool.names(in: .queued) == ["copying.json"])
        // Ten seconds later (by its mtime) it is no longer being written.
        try spool.spool.directory(.queued).setModified(FileName("copying.json"), to: .now() - .seconds(10))
        summary = try spool.runRound()
        #expect(summary.invalid == 1)
        #expect(try spool.names(in: .queued).isEmpty)
        // A complete record is taken at once, however young.
        try spool.dropRecord(id: "whole")
        summary = try spool.runRound()
        #expect(summary.sent == 1, "\((try? spool.ledgerText()) ?? "")")
    }

    @Test func theSameRecordTwiceIsADuplicateNotAConflict() throws {
        let (spool, server) = try Self.spoolWithServer()
        try spool.dropRecord(id: "same")
        try spool.runRound()
        try spool.dropRecord(id: "same")
        let summary = try spool.runRound()
        #expect(summary.duplicates == 1)
        #expect(server.requests.count == 1)
        #expect(try spool.names(in: .queued).isEmpty)
        #expect(try spool.ledger().contains { $0.event == .duplicate && $0.key == "same" })
    }

    @Test func theSameIDWithADifferentBodyNeedsAttention() throws {
        let (spool, server) = try Self.spoolWithServer()
        try spool.dropRecord(id: "same")
        try spool.runRound()
        try spool.dropRecord(id: "same", extra: #","data":{"changed":true}"#)
        try spool.runRound()
        #expect(server.requests.count == 1)
        #expect(try spool.names(in: .sent) == ["same@alpha.json"])
        #expect(try spool.names(in: .needsAttention).count == 1)
        #expect(try spool.ledger().last?.detail.contains("already used by sent/same@alpha") == true)
    }

    @Test func tooLargeRecordsAreFlaggedWithoutBeingRead() throws {
        let (spool, _) = try Self.spoolWithServer()
        spool.configuration.maxRecordSize = 100
        try spool.drop(
            #"{"id":"big","kind":"sleep","data":""# + String(repeating: "x", count: 200) + #""}"#, as: "big.json")
        try spool.runRound()
        #expect(try spool.ledger().last?.detail.contains("more than max-record-size (100)") == true)
    }
}
