import Glibc
import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// The group commit on its own thread (`CommitThread`): the loop hands a
/// commit and goes on; the session has one user at a time; a commit's
/// failure is the pass's error, and what it did not finish stays in
/// `sending/`.
@Suite struct CommitThreadTests {
    /// An entry in `sending/`, and the transition that settles it as sent.
    static func settling(_ key: String, in spool: TemporarySpool) throws -> Transition {
        let name = FileName("\(key)@alpha.json")
        try spool.spool.deliverNewFile(Array(#"{"id":"\#(key)","kind":"sleep"}"#.utf8), named: name, into: .sending)
        let entry = try #require(EntryName(fileName: name))
        return Transition(
            lines: [
                LedgerLine(
                    time: .now(), round: "R", subscriber: "alpha", key: key, event: .sent, status: 201, detail: "")
            ],
            moves: [.init(entry, from: .sending, to: .sent)])
    }

    @Test(
        "a handed commit runs beside the loop: it waits while the loop uses the session, and the pass's end waits for it"
    )
    func aHandedCommitRunsBesideTheLoop() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let commits = GroupCommit(session: spool.session, log: .silent)
        commits.add(try Self.settling("a", in: spool), at: .now())
        var seenWhileHeld: [String] = []
        try commits.exclusive { () throws(RoundError) in
            // Returns at once: the commit thread waits for the session.
            try commits.commit()
            seenWhileHeld = (try? spool.names(in: .sending)) ?? []
        }
        try commits.finish()

        #expect(seenWhileHeld == ["a@alpha.json"])
        #expect(try spool.names(in: .sending).isEmpty)
        #expect(try spool.names(in: .sent) == ["a@alpha.json"])
        #expect(try spool.ledger().map(\.event) == [.sent])
    }

    @Test("the commit thread's signal is readable once a handed commit finishes, and cleared when its outcome is taken")
    func theFinishedSignalMarksADoneCommit() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let commits = GroupCommit(session: spool.session, log: .silent)
        commits.add(try Self.settling("a", in: spool), at: .now())
        try commits.commit()
        let descriptor = try #require(commits.finishedSignal, "a commit is out: the loop has a signal to wait on")
        var readable = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&readable, 1, 10_000) == 1, "no signal within 10 s of a one-entry commit")
        try commits.waitForRunning()
        #expect(commits.finishedSignal == nil, "the outcome taken: nothing is out")
        #expect(poll(&readable, 1, 0) == 0, "still readable after the outcome was taken")
        #expect(try spool.names(in: .sent) == ["a@alpha.json"])
    }

    @Test("commits handed one after another are carried out in order, each after the one before")
    func commitsKeepTheirOrder() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let commits = GroupCommit(session: spool.session, log: .silent)
        for key in ["a", "b", "c"] {
            commits.add(try Self.settling(key, in: spool), at: .now())
            try commits.commit()
        }
        try commits.finish()

        #expect(try spool.ledger().map(\.key) == ["a", "b", "c"])
        #expect(try spool.names(in: .sent).sorted() == ["a@alpha.json", "b@alpha.json", "c@alpha.json"])
    }

    @Test("a commit that fails on the commit thread is the pass's error, and its item stays in sending/")
    func aFailedCommitIsThePassError() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        // The first write is the ledger's.
        spool.session.faults = FaultPlan(failing: .write, at: 1, with: Errno(ENOSPC))
        let commits = GroupCommit(session: spool.session, log: .silent)
        commits.add(try Self.settling("a", in: spool), at: .now())
        try commits.commit()

        #expect(throws: RoundError.self) { try commits.finish() }
        #expect(try spool.names(in: .sending) == ["a@alpha.json"])
        #expect(try spool.names(in: .sent).isEmpty)
    }

    @Test("a pass stopped by another error lets its last commit finish, and that commit's failure is what it reports")
    func aFailedCommitWinsOverALaterError() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        spool.session.faults = FaultPlan(failing: .write, at: 1, with: Errno(ENOSPC))
        let commits = GroupCommit(session: spool.session, log: .silent)
        commits.add(try Self.settling("a", in: spool), at: .now())
        try commits.commit()
        let later = RoundError.spool(SpoolError(SystemError("rename", path: "queued/x", Errno(EIO))))

        let reported = commits.stop(after: later)
        guard case .spool(let error) = reported else {
            Issue.record("expected the commit's spool error, got \(reported)")
            return
        }
        #expect(error.description.contains("No space left"))
        #expect(try spool.names(in: .sending) == ["a@alpha.json"])
    }

    @Test("a pass stopped by another error still commits the answers it had gathered, and reports its own error")
    func aStoppedPassCommitsItsAnswers() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let commits = GroupCommit(session: spool.session, log: .silent)
        commits.add(try Self.settling("a", in: spool), at: .now())
        try commits.commit()
        // Gathered, not yet handed to the thread.
        commits.add(try Self.settling("b", in: spool), at: .now())
        let stop = RoundError.spool(SpoolError(SystemError("socket", path: "alpha", Errno(EMFILE))))

        let reported = commits.stop(after: stop)
        #expect(reported.description.contains("Too many open files"), "\(reported)")
        #expect(try spool.names(in: .sent).sorted() == ["a@alpha.json", "b@alpha.json"])
        #expect(try spool.names(in: .sending).isEmpty)
        #expect(try spool.ledger().map(\.key) == ["a", "b"])
    }

    @Test("a pass stopped after a commit failed carries out nothing more of what it had gathered")
    func aStoppedPassAfterAFailedCommitCommitsNothing() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        spool.session.faults = FaultPlan(failing: .write, at: 1, with: Errno(ENOSPC))
        let commits = GroupCommit(session: spool.session, log: .silent)
        commits.add(try Self.settling("a", in: spool), at: .now())
        try commits.commit()
        #expect(throws: RoundError.self) { try commits.waitForRunning() }
        commits.add(try Self.settling("b", in: spool), at: .now())
        let stop = RoundError.spool(SpoolError(SystemError("read", path: "queued/x", Errno(EIO))))

        _ = commits.stop(after: stop)
        #expect(try spool.names(in: .sending).sorted() == ["a@alpha.json", "b@alpha.json"])
        #expect(try spool.ledger().isEmpty)
    }

    @Test("a commit handed while another runs waits for it, and is not carried out after that one failed")
    func theNextCommitWaitsForAFailedOne() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        spool.session.faults = FaultPlan(failing: .write, at: 1, with: Errno(ENOSPC))
        let commits = GroupCommit(session: spool.session, log: .silent)
        commits.add(try Self.settling("a", in: spool), at: .now())
        try commits.commit()
        commits.add(try Self.settling("b", in: spool), at: .now())
        try commits.commit()

        #expect(throws: RoundError.self) { try commits.finish() }
        // Reported once: the session is the loop's again.
        var ran = false
        try commits.exclusive { ran = true }
        #expect(ran)
        #expect(try spool.names(in: .sending).sorted() == ["a@alpha.json", "b@alpha.json"])
        #expect(try spool.ledger().isEmpty)
    }
}
