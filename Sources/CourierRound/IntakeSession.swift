import CourierIdentifiers
import CourierPosix
import CourierSpool

/// Intake one dropped file at a time, committed in groups: how a delivery
/// pass takes files in as it meets them in `queued/`, so that a record the
/// same round will send goes from its dropped name straight to
/// `sending/KEY@SUB.json`, its validated bytes kept for the request (one
/// rename, one read and one parse fewer than by way of `queued/`).
final class IntakeSession {
    private let intake: Intake
    private var group: [Intake.Accepted] = []
    private var groupBytes = 0
    /// Entries not on disk yet, with their bytes: this group's, and those of
    /// groups handed to the commit thread whose commit has not finished. A
    /// record that would make one again is a duplicate of it; earlier
    /// groups' entries are on disk and found there. One table for both, so
    /// that a record costs one lookup and an entry moves from its group to
    /// the commit without being copied from one table into another.
    private var unsettled: [EntryName: [UInt8]] = [:]
    /// Groups handed and not committed yet, oldest first: their entries.
    private var handed: [[EntryName]] = []
    /// Groups planned under the serial lock's present hold, which goes on
    /// while a group waits for its commit and the next one fills.
    private var groupsThisHold = 0
    /// Groups one hold of the serial lock spans at most: then the pass
    /// reads no more dropped files until they are committed and the lock
    /// let go, so that another worker's intake, or a person's command,
    /// gets its turn. (A hold that lasted while files streamed in kept a
    /// second worker on GlusterFS from taking anything in for 120 s.)
    static let groupsPerHold = 2

    /// The present hold has spanned its groups: no new group until the
    /// ones out are committed.
    var holdIsDone: Bool { !handed.isEmpty && groupsThisHold >= Self.groupsPerHold }
    private(set) var report = IntakeReport()
    /// Held from a group's first file to its commit: the duplicate check
    /// and the entries it decides on are one step between workers (and a
    /// file another worker took is gone by the time this one looks), and
    /// the listing it may use is exact under it.
    private var serial: SerialLock?
    /// The duplicate check, by lookups or by a listing (`EntryLookup`).
    private(set) var lookup = EntryLookup()
    /// Runs before the serial lock is taken: what may wait on the network
    /// (an OAuth token for a subscriber intake sends to) is fetched here,
    /// never while the other workers wait for the lock.
    var beforeSerialLock: () -> Void = {}

    init(intake: Intake) {
        self.intake = intake
    }

    /// Accepted files wait for their group's commit.
    var hasPending: Bool { !group.isEmpty }
    var isFull: Bool { isFull(behindCommit: false) }
    var groupSizeBehindCommit: Int { intake.groupSizeBehindCommit }

    /// Full at `Intake.groupSize`, or at `Intake.groupSizeBehindCommit` when
    /// `behindCommit`: its commit would wait for the one out anyway.
    func isFull(behindCommit: Bool) -> Bool {
        group.count >= (behindCommit ? groupSizeBehindCommit : Intake.groupSize)
            || groupBytes >= Intake.groupBytes
    }

    /// A dropped file read ahead of its turn, for `offer` (`Intake.readAhead`).
    func readAhead(_ name: FileName, kind: FileStatus.Kind?) -> Intake.ReadAhead? {
        intake.readAhead(name, kind: kind)
    }

    /// Whether one more dropped file may be read ahead, beside `files`
    /// files of `bytes` read ahead already and `groupsOut` groups handed to
    /// commits: the group filling now and what was read ahead stay within
    /// one group behind a commit, in files and in bytes, and every dropped
    /// file open (each until its commit, a group handed counted as full)
    /// within what the open-file limit leaves for them
    /// (`Intake.droppedFilesAtMost`). Only where this process is the
    /// spool's one worker: read ahead on a shared spool, a file another
    /// worker took in meanwhile would count as a duplicate of its own
    /// entries.
    func mayReadAhead(files: Int, bytes: Int, groupsOut: Int) -> Bool {
        intake.spool.worker == nil && group.count + files < groupSizeBehindCommit
            && groupsOut * groupSizeBehindCommit + group.count + files < intake.droppedFilesAtMost
            && groupBytes + bytes < Intake.groupBytes
    }

    /// Validates one dropped file: flagged, left to settle, kept as a route,
    /// or added to the group.
    /// `kind`: what the directory listing said it is, if it did; `ahead`:
    /// the file as read ahead, if it was.
    func offer(_ name: FileName, kind: FileStatus.Kind?, readAhead ahead: Intake.ReadAhead? = nil)
        throws(SpoolError)
    {
        if serial == nil {
            beforeSerialLock()
            // No group of this session waits for its commit: the hold
            // before has ended, and others had their turn at the lock.
            if handed.isEmpty { groupsThisHold = 0 }
            let lock = try intake.session.serialLock()
            lookup.locked(lock)
            serial = lock
        }
        guard
            let accepted = try intake.take(
                name, kind: kind, readAhead: ahead, unsettled: &unsettled, lookup: &lookup, into: &report)
        else {
            if group.isEmpty { unlock() }
            return
        }
        group.append(accepted)
        groupBytes += accepted.record.bytes.count
    }

    /// Makes the group durable. Entries `sendNow` picks go to `sending/`
    /// and come back as claimed items; the rest go to `queued/` (workouts
    /// waiting for a route to `awaitingRoute/`).
    func commit(sendNow: (EntryName) -> Bool = { _ in false }) throws(SpoolError) -> [DeliveryItem] {
        defer {
            // Committed, or failed: either way no longer this round's to
            // make, and a later file's duplicate check looks on disk.
            for accepted in group {
                for entry in accepted.entries { unsettled[entry] = nil }
            }
            groupEnded()
        }
        let claimed = try IntakeCommit(session: intake.session, round: intake.round)
            .commit(group, sendNow: sendNow, into: &report)
        for accepted in group {
            for entry in accepted.entries { lookup.made(entry.fileName) }
        }
        return claimed
    }

    /// A group planned and not handed yet (`hand`).
    struct Handing {
        fileprivate let plan: IntakeCommit.Plan
        fileprivate let hold: SerialLock?

        /// Entries that will go to `sending/`, and their bytes.
        var claimed: (items: Int, bytes: Int) {
            (plan.claimed.count, plan.claimed.reduce(0) { $0 + $1.body.count })
        }
    }

    /// Plans the group's commit, to be handed to the commit thread
    /// (`hand`), and starts the next group: it may fill meanwhile, under
    /// the same hold of the serial lock, which the plan keeps until its
    /// commit is done. Nil for an empty group.
    func plan(sendNow: (EntryName) -> Bool) -> Handing? {
        guard !group.isEmpty else {
            unlock()
            return nil
        }
        let plan = IntakeCommit(session: intake.session, round: intake.round).plan(group, sendNow: sendNow)
        let entries = group.flatMap(\.entries)
        handed.append(entries)
        groupsThisHold += 1
        // Names the commit makes: the listing holds them from now on, as
        // `unsettled` does until they are on disk.
        for entry in entries { lookup.made(entry.fileName) }
        let handing = Handing(plan: plan, hold: serial)
        groupEnded()
        return handing
    }

    /// Hands a planned group's commit to `commits`. `arrived` gets the
    /// entries that went to `sending/` once it is done.
    func hand(_ handing: Handing, to commits: GroupCommit, arrived: @escaping ([DeliveryItem]) -> Void)
        throws(RoundError)
    {
        let plan = handing.plan
        try commits.handIntake(
            IntakeJob(
                plan: plan, hold: GroupHold(handing.hold),
                done: { [self] in
                    for entry in handed.removeFirst() { unsettled[entry] = nil }
                    report.add(plan.counts)
                    arrived(plan.claimed)
                }))
    }

    private func groupEnded() {
        group.removeAll(keepingCapacity: true)
        groupBytes = 0
        unlock()
    }

    private func unlock() {
        guard serial != nil else { return }
        lookup.unlocked()
        serial = nil
    }
}
