import Foundation
import Glibc
import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// A script that writes into a dropped file in place (`echo … >
/// queued/export.json`, against the README's advice) keeps its inode. In a
/// delivery pass intake reads the file, the pass plans the group's commit
/// (claiming at birth what it will send now) and the commit thread carries
/// it out later: a write in between must not go on under the entry name of
/// the record read, whose request carries the bytes read.
@Suite struct RewrittenDropTests {
    static let first = #"{"id":"first","kind":"sleep"}"#
    /// The same size as `first`, another record.
    static let fresh = #"{"id":"fresh","kind":"sleep"}"#

    static func intake(_ spool: TemporarySpool) -> Intake {
        Intake(session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now()))
    }

    /// Takes export.json in and plans its group's commit, the entry claimed
    /// at birth; then writes `fresh` into the same file, and carries the
    /// commit out.
    static func rewrittenAfterPlan(_ spool: TemporarySpool) throws -> IntakeCommit.Plan {
        let intake = intake(spool)
        var planned: [EntryName: [UInt8]] = [:]
        var lookup = EntryLookup()
        var report = IntakeReport()
        let accepted = try #require(
            try intake.take(
                FileName("export.json"), kind: nil, planned: &planned, committing: [:], lookup: &lookup,
                into: &report))
        let plan = IntakeCommit(session: spool.session, round: intake.round).plan([accepted], sendNow: { _ in true })
        // Past the file system's clock tick, so that the write moves the times.
        usleep(20_000)
        try write(fresh, into: spool.path + "/queued/export.json")
        try IntakeCommit.carryOut(plan, in: spool.session)
        return plan
    }

    static func write(_ text: String, into path: String) throws {
        let fd = open(path, O_WRONLY | O_TRUNC)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == text.utf8.count)
    }

    static func contents(_ spool: TemporarySpool, _ state: SpoolState, _ name: String) throws -> String {
        try String(contentsOfFile: spool.path + "/\(state.rawValue)/\(name)", encoding: .utf8)
    }

    @Test(
        "a dropped file written into after its entry was claimed at birth is not renamed into sending/ under the first record's name"
    )
    func aRewrittenClaimedDropIsNotSentOnUnderTheFirstRecord() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try spool.drop(Self.first, as: "export.json")
        let plan = try Self.rewrittenAfterPlan(spool)
        #expect(plan.claimed.map { String(decoding: $0.body, as: UTF8.self) } == [Self.first])
        // What the round will settle into sent/ is what it sends.
        #expect(try Self.contents(spool, .sending, "first@alpha.json") == Self.first)
        #expect(try Self.contents(spool, .queued, "export.json") == Self.fresh)
        // The next intake takes the new record in as itself.
        _ = try Self.intake(spool).run()
        #expect(try Self.contents(spool, .queued, "fresh@alpha.json") == Self.fresh)
        #expect(try spool.names(in: .needsAttention).isEmpty)
    }

    @Test("a duplicate's dropped file written into after intake planned its removal is kept for the next intake")
    func aRewrittenDuplicateIsKept() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try spool.drop(Self.first, as: "earlier.json")
        _ = try Self.intake(spool).run()
        try spool.drop(Self.first, as: "export.json")
        _ = try Self.rewrittenAfterPlan(spool)
        #expect(try Self.contents(spool, .queued, "export.json") == Self.fresh)
        _ = try Self.intake(spool).run()
        #expect(try Self.contents(spool, .queued, "fresh@alpha.json") == Self.fresh)
    }

    @Test("a removal planned for a file as read keeps the file if it was written into since, and removes it if not")
    func aRemovalOfAFileAsReadKeepsItIfWrittenInto() throws {
        let spool = try TemporarySpool(subscribers: [])
        for written in [true, false] {
            try spool.drop(Self.first, as: "export.json")
            let read = try #require(try spool.session.spool.directory(.queued).status(of: FileName("export.json")))
            if written {
                usleep(20_000)
                try Self.write(Self.fresh, into: spool.path + "/queued/export.json")
            }
            let committed = try spool.session.commit(
                Transition(removals: [.init(FileName("export.json"), in: .state(.queued), expected: .unwritten(read))]))
            #expect(committed.absent.count == (written ? 1 : 0))
            #expect(FileManager.default.fileExists(atPath: spool.path + "/queued/export.json") == written)
            if written { #expect(try Self.contents(spool, .queued, "export.json") == Self.fresh) }
        }
    }
}
