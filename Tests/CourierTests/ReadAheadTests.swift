import Foundation
import Glibc
import Testing

@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// Dropped files read ahead while a commit holds the session
/// (`DeliveryFeed.readAhead`): opened, read and parsed, nothing decided and
/// nothing changed until the pass takes them in, then taken in from what
/// was read, with the checks a file read in its turn has.
@Suite struct ReadAheadTests {
    static func intake(_ session: SpoolSession, _ spool: TemporarySpool) -> IntakeSession {
        IntakeSession(
            intake: Intake(
                session: session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())))
    }

    static func fill(_ feed: DeliveryFeed) throws {
        try feed.fill(while: { true }, isConfigured: { _ in true }, unconfigured: { _ in })
    }

    @Test(
        "files read ahead change nothing in the spool, and are taken in from the bytes read, one removed meanwhile too")
    func readingAheadChangesNothingUntilTheyAreTakenIn() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        for index in 0..<300 { try spool.dropRecord(id: "r\(index)") }
        let intake = Self.intake(spool.session, spool)
        let commits = GroupCommit(session: spool.session, log: .silent)
        let feed = try DeliveryFeed(spool: spool.spool, intake: intake, commits: commits)
        var arrived: [String] = []
        feed.arrived = { arrived += $0.map(\.entry.key.description) }

        try feed.readAhead()
        #expect(try spool.names(in: .queued).count == 300)
        #expect(try spool.names(in: .sending).isEmpty)
        #expect(try spool.ledger().isEmpty)
        // A person's `rm` after the read: the record was read, and is not
        // lost (as for a file moved away between intake's read and commit).
        #expect(unlink(spool.path + "/queued/r7.json") == 0)

        try Self.fill(feed)
        try commits.finish()
        #expect(arrived.count == 300 && Set(arrived).count == 300)
        #expect(try spool.names(in: .sending).count == 300)
        #expect(try spool.names(in: .queued).isEmpty)
        #expect(try spool.ledger().filter { $0.event == .accepted }.count == 300)
        let kept = try [UInt8](Data(contentsOf: URL(fileURLWithPath: spool.path + "/sending/r7@alpha.json")))
        #expect(String(decoding: kept, as: UTF8.self).contains(#""id":"r7""#))
    }

    @Test(
        "a file written into in place after it was read ahead stays for the next intake; its entry holds the bytes read"
    )
    func aFileRewrittenAfterItsReadStays() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        try spool.drop(#"{"id":"w","kind":"sleep"}"#, as: "w.json")
        // The same inode, other bytes and another size, a later time.
        let rewritten = #"{"id":"w","kind":"sleep","n":2}"#
        try Self.readAheadThenTakeIn(spool) {
            let fd = open(spool.path + "/queued/w.json", O_WRONLY | O_TRUNC)
            #expect(fd >= 0)
            #expect(write(fd, rewritten, rewritten.utf8.count) == rewritten.utf8.count)
            close(fd)
        }
        let entry = try String(contentsOfFile: spool.path + "/sending/w@alpha.json", encoding: .utf8)
        #expect(entry == #"{"id":"w","kind":"sleep"}"#)
        #expect(try String(contentsOfFile: spool.path + "/queued/w.json", encoding: .utf8) == rewritten)
    }

    @Test("what is read ahead stays within one group behind a commit, beside the group filling")
    func readingAheadIsBounded() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let intake = Self.intake(spool.session, spool)
        let limit = intake.groupSizeBehindCommit
        #expect(intake.mayReadAhead(files: limit - 1, bytes: 0, groupsOut: 0))
        #expect(!intake.mayReadAhead(files: limit, bytes: 0, groupsOut: 0))
        #expect(!intake.mayReadAhead(files: 0, bytes: Intake.groupBytes, groupsOut: 0))
        try spool.drop(#"{"id":"g","kind":"sleep"}"#, as: "g.json")
        try intake.offer(FileName("g.json"), kind: nil)
        #expect(!intake.mayReadAhead(files: limit - 1, bytes: 0, groupsOut: 0))
    }

    @Test(
        "at an open-file limit of 700, groups out leave what is read ahead only the descriptors they do not hold")
    func readingAheadGivesWayToGroupsOut() throws {
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: 16)
        ])
        let intake = IntakeSession(
            intake: Intake(
                session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now()),
                openFileLimit: 700))
        // Groups of 256 (the floor), and 700 - 256 - 16 = 428 for dropped files.
        #expect(intake.groupSizeBehindCommit == Intake.groupSize)
        #expect(intake.mayReadAhead(files: 0, bytes: 0, groupsOut: 0))
        #expect(intake.mayReadAhead(files: 428 - 256 - 1, bytes: 0, groupsOut: 1))
        #expect(!intake.mayReadAhead(files: 428 - 256, bytes: 0, groupsOut: 1))
        #expect(!intake.mayReadAhead(files: 0, bytes: 0, groupsOut: 2))
    }

    static let first = #"{"id":"first","kind":"sleep"}"#
    static let fresh = #"{"id":"fresh","kind":"sleep"}"#
    static let otherBody = #"{"id":"first","kind":"sleeq"}"#

    /// A script's next export renamed over a dropped name (one fixed name).
    static func renameOver(_ spool: TemporarySpool, _ name: String, with text: String) throws {
        try text.write(toFile: spool.path + "/tmp/" + name, atomically: false, encoding: .utf8)
        #expect(rename(spool.path + "/tmp/" + name, spool.path + "/queued/" + name) == 0)
    }

    static func nextIntake(_ spool: TemporarySpool) throws -> IntakeReport {
        try Intake(
            session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())
        )
        .run()
    }

    /// A pass's feed reads the dropped files ahead, `meanwhile` changes
    /// them, and the feed takes them in and commits.
    static func readAheadThenTakeIn(_ spool: TemporarySpool, meanwhile: () throws -> Void) throws {
        let commits = GroupCommit(session: spool.session, log: .silent)
        let feed = try DeliveryFeed(spool: spool.spool, intake: Self.intake(spool.session, spool), commits: commits)
        try feed.readAhead()
        try meanwhile()
        try Self.fill(feed)
        try commits.finish()
    }

    /// `export.json` under an id `sent/` holds with another body.
    static func dropConflicting(_ spool: TemporarySpool) throws {
        try spool.spool.deliverNewFile(Array(Self.first.utf8), named: FileName("first@alpha.json"), into: .sent)
        try spool.drop(Self.otherBody, as: "export.json")
    }

    static func flaggedBodies(_ spool: TemporarySpool) throws -> [String] {
        try spool.names(in: .needsAttention).map {
            try String(contentsOfFile: spool.path + "/needsAttention/" + $0, encoding: .utf8)
        }
    }

    @Test(
        "a file read ahead whose id another body holds, then renamed over by a new record: the new record is taken in, not flagged"
    )
    func aConflictReadAheadFlagsOnlyTheFileRead() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        try Self.dropConflicting(spool)
        try Self.readAheadThenTakeIn(spool) { try Self.renameOver(spool, "export.json", with: Self.fresh) }
        #expect(try Self.flaggedBodies(spool).isEmpty)
        #expect(try spool.ledger().filter { $0.event == .invalid }.isEmpty)
        #expect(try spool.names(in: .queued) == ["export.json"])

        _ = try Self.nextIntake(spool)
        #expect(try spool.names(in: .queued) == ["fresh@alpha.json"])
        #expect(try spool.ledger().filter { $0.event == .accepted }.map(\.key) == ["fresh"])
    }

    @Test("a file read ahead that no subscriber takes, then renamed over by a record one does: that record is taken in")
    func aRefusedFileReadAheadFlagsOnlyTheFileRead() throws {
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", kinds: ["sleep"])
        ])
        try spool.drop(#"{"id":"n","kind":"note"}"#, as: "export.json")
        try Self.readAheadThenTakeIn(spool) { try Self.renameOver(spool, "export.json", with: Self.fresh) }
        #expect(try Self.flaggedBodies(spool).isEmpty)
        _ = try Self.nextIntake(spool)
        #expect(try spool.names(in: .queued) == ["fresh@alpha.json"])
    }

    @Test(
        "a conflicting file read ahead, then a symbolic link renamed over it: the link is flagged as a link, and never read"
    )
    func aConflictReadAheadThenALinkIsFlaggedAsALink() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        try Self.dropConflicting(spool)
        try Self.readAheadThenTakeIn(spool) {
            #expect(symlink("/etc/passwd", spool.path + "/tmp/export.json") == 0)
            #expect(rename(spool.path + "/tmp/export.json", spool.path + "/queued/export.json") == 0)
        }
        _ = try Self.nextIntake(spool)
        let invalid = try spool.ledger().filter { $0.event == .invalid }.map(\.detail)
        #expect(invalid.count == 1)
        #expect(invalid.allSatisfy { $0.contains("symbolic link") }, "\(invalid)")
    }

    @Test("on a spool shared by workers nothing is read ahead: a file another worker took would look like a duplicate")
    func aSharedSpoolReadsNothingAhead() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        try spool.dropRecord(id: "s")
        let worker = try SpoolSession(path: spool.path, worker: WorkerID("w1"))
        let intake = Self.intake(worker, spool)
        #expect(!intake.mayReadAhead(files: 0, bytes: 0, groupsOut: 0))
        let feed = try DeliveryFeed(
            spool: worker.spool, intake: intake, commits: GroupCommit(session: worker, log: .silent))
        try feed.readAhead()
        #expect(try spool.names(in: .queued) == ["s.json"])
    }
}
