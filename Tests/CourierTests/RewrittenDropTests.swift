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
/// it out later. A write anywhere in between is another record: it must not
/// go on under the entry name of the record read, which the ledger says was
/// accepted, and neither record may be lost.
@Suite struct RewrittenDropTests {
    static let first = #"{"id":"first","kind":"sleep"}"#
    /// The same size as `first`, another record.
    static let fresh = #"{"id":"fresh","kind":"sleep"}"#
    /// The same size and id as `first`, other bytes.
    static let edited = #"{"id":"first","kind":"sleeq"}"#

    static func intake(_ spool: TemporarySpool) -> Intake {
        Intake(session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now()))
    }

    /// When the script writes into the file.
    enum Moment: CaseIterable {
        case beforePlan, betweenPlanAndCommit
    }

    /// Takes export.json in, plans its group's commit (claiming at birth
    /// if `sendNow`) and carries it out, with `text` written into the same
    /// file at `moment`.
    @discardableResult
    static func rewritten(
        _ spool: TemporarySpool, with text: String = fresh, at moment: Moment = .betweenPlanAndCommit,
        sendNow: Bool = true
    ) throws -> IntakeCommit.Plan {
        let intake = intake(spool)
        var unsettled: [EntryName: [UInt8]] = [:]
        var lookup = EntryLookup()
        var report = IntakeReport()
        let accepted = try #require(
            try intake.take(
                FileName("export.json"), kind: nil, unsettled: &unsettled, lookup: &lookup, into: &report))
        // Past the file system's clock tick, so that the write moves the times.
        usleep(20_000)
        if moment == .beforePlan { try write(text, into: spool.path + "/queued/export.json") }
        let plan = IntakeCommit(session: spool.session, round: intake.round).plan(
            [accepted], sendNow: { _ in sendNow })
        if moment == .betweenPlanAndCommit { try write(text, into: spool.path + "/queued/export.json") }
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
        "a dropped file written into after intake read it keeps the record read as its entry, claimed or not, and is taken in as itself next",
        arguments: Moment.allCases, [true, false])
    func aRewrittenDropKeepsBothRecords(at moment: Moment, sendNow: Bool) throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        try spool.drop(Self.first, as: "export.json")
        let plan = try Self.rewritten(spool, at: moment, sendNow: sendNow)
        // What is sent now, if anything, is what the entry keeps.
        #expect(plan.claimed.map { String(decoding: $0.body, as: UTF8.self) } == (sendNow ? [Self.first] : []))
        #expect(try Self.contents(spool, sendNow ? .sending : .queued, "first@alpha.json") == Self.first)
        #expect(try Self.contents(spool, .queued, "export.json") == Self.fresh)
        _ = try Self.intake(spool).run()
        #expect(try Self.contents(spool, .queued, "fresh@alpha.json") == Self.fresh)
        #expect(try spool.names(in: .needsAttention).isEmpty)
    }

    @Test(
        "a dropped file written into under the same id after intake read it is a second version: the one read goes on, the other needs a person",
        arguments: [true, false])
    func aRewriteUnderTheSameIDNeedsAPerson(sendNow: Bool) throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        try spool.drop(Self.first, as: "export.json")
        try Self.rewritten(spool, with: Self.edited, sendNow: sendNow)
        #expect(try Self.contents(spool, sendNow ? .sending : .queued, "first@alpha.json") == Self.first)
        _ = try Self.intake(spool).run()
        let flagged = try spool.names(in: .needsAttention)
        #expect(flagged.count == 1)
        #expect(try flagged.map { try Self.contents(spool, .needsAttention, $0) } == [Self.edited])
        let reason = try spool.ledger().last { $0.event == .invalid }?.detail ?? ""
        #expect(reason.contains("id first is already used by") && reason.contains("with a different body"), "\(reason)")
    }

    @Test("a duplicate's dropped file written into after intake planned its removal is kept for the next intake")
    func aRewrittenDuplicateIsKept() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        try spool.drop(Self.first, as: "earlier.json")
        _ = try Self.intake(spool).run()
        try spool.drop(Self.first, as: "export.json")
        try Self.rewritten(spool)
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
