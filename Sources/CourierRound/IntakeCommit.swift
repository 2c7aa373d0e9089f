import CourierIdentifiers
import CourierPosix
import CourierRecords
import CourierSpool
import Glibc

/// Intake's group commit: a group of accepted files becomes one
/// transition. The dropped files' data is made durable with the copies for
/// a record's second and later subscribers, staged under `tmp/`; the
/// group's ledger lines go next; then the copies are renamed into place,
/// and only then the dropped files themselves. The dropped file becomes
/// the first subscriber's entry by a rename: its bytes are the body, so it
/// is never copied. An entry the round will send now is renamed straight
/// into `sending/` — claimed at birth; recovery returns it to `queued/` if
/// the round dies. A crash anywhere leaves the dropped file (or its entry)
/// in place, and intake of it again finds identical entries: a duplicate,
/// not a conflict.
struct IntakeCommit {
    let session: SpoolSession
    let round: RoundID

    /// A group's commit, planned: what `carryOut` does, and what the group
    /// comes to once it is done. What each entry becomes is decided here;
    /// the transition that says so in lines and moves is made by
    /// `transition()`, where the commit is carried out: on the commit
    /// thread, off the pass's loop, which sets the round's pace.
    struct Plan {
        /// For the transition, and for the entries whose dropped file a
        /// person moved away meanwhile.
        let group: [Intake.Accepted]
        /// Each accepted file's entries' states, in `entries` order.
        let targets: [[SpoolState]]
        /// The time the group's ledger lines say.
        let time: Timestamp
        let round: RoundID
        /// The entries that go to `sending/`, with their bytes.
        let claimed: [DeliveryItem]
        /// What the group adds to the intake report.
        let counts: IntakeReport

        /// The transition that carries the plan out: the group's lines,
        /// its copies for second subscribers, its moves and removals.
        func transition() -> Transition {
            var transition = Transition()
            // The dropped bytes reach the disk before any name or line says
            // they are an entry: after a power cut an entry is never empty
            // (Postfix's pickup does the same before cleanup takes a message).
            transition.durable = group.filter { !$0.entries.isEmpty && !$0.isForeign }.map(\.file)
            for accepted in group { IntakeCommit.lines(accepted, now: time, round: round, into: &transition.lines) }
            for (accepted, targets) in zip(group, targets) {
                // A producer's file stays the producer's after a rename: it
                // could still rewrite or remove the entry, and courier may not
                // set its time. Every entry of it is courier's own copy.
                for (entry, target) in zip(accepted.entries, targets).dropFirst(accepted.isForeign ? 0 : 1) {
                    transition.newFiles.append(
                        .init(accepted.record.bytes, as: entry.fileName, in: .state(target), replacing: false))
                }
                guard !accepted.isForeign, let first = accepted.entries.first, let target = targets.first else {
                    // A dropped file every subscriber already had, or a
                    // producer's copied above, goes; not another file a script
                    // renamed over its name since, nor one written into since:
                    // that is another record, for the next intake.
                    transition.removals.append(
                        .init(accepted.name, in: .state(.queued), expected: accepted.readAs.map { .unwritten($0) }))
                    continue
                }
                // Only the file read, as read: one a script renamed over the
                // dropped name since, or wrote into in place, is another record
                // and stays there for the next intake, and the entry is written
                // from the bytes read, as for a file moved away. What the ledger
                // says was accepted is what the entry holds, and what is sent.
                // An entry's modification time is its intake time: route-wait
                // and prune count from it, not from when a script wrote it (or
                // what `cp -p` kept). Set through the descriptor intake read
                // by (no lookup of the name in a large queued/), unless the
                // file's own time is that to the minute (`keepsItsOwnTime`).
                // A workout that waits for its route is always touched:
                // route-wait may be shorter than that minute.
                let touching =
                    target != .awaitingRoute
                        && IntakeCommit.keepsItsOwnTime(modified: accepted.readAs?.modified, at: time)
                    ? nil : accepted.file
                transition.moves.append(
                    .init(
                        accepted.name, from: .state(.queued), to: .state(target), as: first.fileName,
                        expected: accepted.readAs.map { .unwritten($0) }, touching: touching))
            }
            return transition
        }
    }

    /// Commits the group here and now. Returns the entries that went to
    /// `sending/`, with their bytes.
    func commit(_ group: [Intake.Accepted], sendNow: (EntryName) -> Bool, into report: inout IntakeReport)
        throws(SpoolError) -> [DeliveryItem]
    {
        guard !group.isEmpty else { return [] }
        let plan = plan(group, sendNow: sendNow)
        try Self.carryOut(plan, in: session)
        report.add(plan.counts)
        return plan.claimed
    }

    /// What the group's entries become and what the group comes to;
    /// nothing is changed yet. `sendNow` is asked here, on the pass's
    /// thread.
    func plan(_ group: [Intake.Accepted], sendNow: (EntryName) -> Bool) -> Plan {
        let now = Timestamp.now()
        // Asked once per entry: the answer may count what stays queued.
        let targets = group.map { accepted in
            accepted.entries.map { entry in
                accepted.target == .queued && sendNow(entry) ? SpoolState.sending : accepted.target
            }
        }
        var counts = IntakeReport()
        counts.groups = 1
        var claimed: [DeliveryItem] = []
        for (accepted, targets) in zip(group, targets) {
            counts.accepted += accepted.entries.count
            counts.duplicates += accepted.duplicates.count
            if accepted.target == .awaitingRoute { counts.routesKept += 1 }
            for (entry, target) in zip(accepted.entries, targets) where target == .sending {
                claimed.append(DeliveryItem(entry: entry, body: accepted.record.bytes, fields: accepted.record.outbox))
            }
        }
        return Plan(group: group, targets: targets, time: now, round: round, claimed: claimed, counts: counts)
    }

    /// The planned commit, with `settled` (a group commit's transition)
    /// if given; then the entries whose dropped file a person moved away
    /// meanwhile (or renamed another over its name) are written from the
    /// bytes read and checked: the record is not lost. Returns the
    /// warnings for `settled`'s moves a person beat it to.
    @discardableResult
    static func carryOut(_ plan: Plan, with settled: Transition? = nil, in session: SpoolSession)
        throws(SpoolError) -> [String]
    {
        var transition = plan.transition()
        if let settled { transition.append(settled) }
        let committed = try session.commit(transition)
        var rewritten = Transition()
        var warnings: [String] = []
        for move in committed.vanished {
            // A dropped name is never an entry's: the move is the group's.
            guard let accepted = plan.group.first(where: { $0.name == move.name }) else {
                warnings.append(CommitThread.movedAway(move))
                continue
            }
            rewritten.newFiles.append(.init(accepted.record.bytes, as: move.newName, in: move.to, replacing: false))
        }
        try session.commit(rewritten)
        return warnings
    }

    /// How long before its intake a dropped file may have been written and
    /// keep its own modification time as its entry's intake time (not for
    /// a workout waiting for its route: route-wait may be shorter).
    /// Route-wait, prune and the age metrics count in minutes and days; a
    /// futimens per record was 4–5 % of a round's commit thread, the
    /// thread that sets the pace of batch mode.
    static let freshness: Duration = .seconds(60)

    /// Whether a dropped file's modification time, as intake read it (nil:
    /// not read), may stand for its intake time, so that the file is not
    /// touched: written in the `freshness` before `time`, and not holding
    /// a deferral's nanoseconds (`DeferralStamp`). A time further back
    /// (`cp -p`, `touch -d`, a file that waited for a round), one in the
    /// future, or none, and the file is touched as before.
    static func keepsItsOwnTime(modified: Timestamp?, at time: Timestamp) -> Bool {
        guard let modified, modified <= time, time - modified <= freshness else { return false }
        return DeferralStamp(modified: modified) == nil
    }

    /// `accepted` (or `awaitingRoute`) per new entry, `duplicate` per repeat.
    private static func lines(
        _ accepted: Intake.Accepted, now: Timestamp, round: RoundID, into lines: inout [LedgerLine]
    ) {
        let origin = FlaggedName.printable(accepted.name)
        let event: LedgerEvent = accepted.record.awaitRoute ? .awaitingRoute : .accepted
        let detail = "kind=\(accepted.record.kind) from \(origin)"
        for entry in accepted.entries {
            lines.append(
                LedgerLine(
                    time: now, actor: .round(round), subscriber: entry.subscriber, key: entry.key.description,
                    event: event, detail: detail))
        }
        for (entry, state) in accepted.duplicates {
            lines.append(
                LedgerLine(
                    time: now, actor: .round(round), subscriber: entry.subscriber, key: entry.key.description,
                    event: .duplicate, detail: "same record already in \(state.rawValue)/; from \(origin) removed"))
        }
    }
}
