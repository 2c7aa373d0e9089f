import CourierPosix
import CourierRecords
import CourierSpool

/// Intake's group commit: makes a group of accepted files durable entries.
/// The dropped files' data is synced first (one syncfs for the group), the
/// copies for a record's second and later subscribers are staged and
/// fsynced under `tmp/`, the group's ledger lines are appended with one
/// fsync, then everything is renamed into place and the folders fsynced.
/// The dropped file itself becomes the first subscriber's entry by a
/// rename: its bytes are the body, so it is never copied. A crash anywhere
/// leaves the dropped file (or its entry) in place, and intake of it again
/// finds identical entries: a duplicate, not a conflict.
struct IntakeCommit {
    let spool: Spool
    let ledger: Ledger
    let round: RoundID
    let now: Timestamp

    func commit(_ group: [Intake.Accepted], into report: inout IntakeReport) throws(SpoolError) {
        guard !group.isEmpty else { return }
        report.groups += 1
        try syncDroppedFiles(group)
        var staged: [(temporary: FileName, entry: EntryName, target: SpoolState)] = []
        // Whatever was staged and not renamed when this fails goes: a
        // failed group leaves no orphans in tmp/.
        var renamed = 0
        defer { for (temporary, _, _) in staged.dropFirst(renamed) { try? spool.tmp.remove(temporary) } }
        for accepted in group {
            for entry in accepted.entries.dropFirst() {
                staged.append((try spool.stageFile(accepted.record.bytes, for: entry.fileName), entry, accepted.target))
            }
        }
        try ledger.append(group.flatMap(lines))
        for (temporary, entry, target) in staged {
            // The folders are fsynced once for the group, below.
            do {
                try spool.tmp.publish(
                    temporary, to: spool.directory(target), as: entry.fileName, syncDirectory: false,
                    faults: spool.faults)
            } catch {
                throw SpoolError(error)
            }
            renamed += 1
        }
        for accepted in group {
            try finish(accepted)
            report.accepted += accepted.entries.count
            report.duplicates += accepted.duplicates.count
        }
        try spool.sync(group.contains { $0.target == .awaitingRoute } ? [.queued, .awaitingRoute] : [.queued])
    }

    /// The dropped bytes reach the disk before any name or line says they
    /// are an entry: after a power cut an entry is never empty. One syncfs
    /// covers the whole group (the files are on the spool's file system);
    /// a group of one takes the cheaper fsync.
    private func syncDroppedFiles(_ group: [Intake.Accepted]) throws(SpoolError) {
        let taken = group.filter { !$0.entries.isEmpty }
        guard let first = taken.first else { return }
        do {
            try spool.faults?.check(.sync)
            if taken.count == 1 { try first.file.sync() } else { try spool.directory(.queued).syncFileSystem() }
        } catch {
            throw SpoolError(error)
        }
    }

    /// `accepted` (or `awaitingRoute`) per new entry, `duplicate` per repeat.
    private func lines(_ accepted: Intake.Accepted) -> [LedgerLine] {
        let origin = "from \(FlaggedName.printable(accepted.name))"
        let taken = accepted.entries.map { entry in
            LedgerLine(
                time: now, round: round.value, subscriber: entry.subscriber.value, key: entry.key.description,
                event: accepted.record.awaitRoute ? .awaitingRoute : .accepted,
                detail: "kind=\(accepted.record.kind) \(origin)")
        }
        return taken
            + accepted.duplicates.map { entry, state in
                LedgerLine(
                    time: now, round: round.value, subscriber: entry.subscriber.value, key: entry.key.description,
                    event: .duplicate, detail: "same record already in \(state.rawValue)/; \(origin) removed")
            }
    }

    /// The dropped file becomes the first entry, or goes when every
    /// subscriber already had it.
    private func finish(_ accepted: Intake.Accepted) throws(SpoolError) {
        let queued = spool.directory(.queued)
        guard let first = accepted.entries.first else {
            do { try queued.remove(accepted.name) } catch {
                throw SpoolError(error)
            }
            return
        }
        // An entry's modification time is its intake time: route-wait and
        // prune count from it, not from when a script wrote it. A file
        // courier may not touch (read-only, another owner) keeps its own
        // time rather than block the round.
        try? queued.touch(accepted.name)
        try takeDroppedFile(accepted, as: first)
    }

    /// The dropped file becomes the first entry by rename. A person who
    /// moved it away meanwhile does not lose the record: its bytes, read and
    /// checked, are written as the entry instead.
    private func takeDroppedFile(_ accepted: Intake.Accepted, as entry: EntryName) throws(SpoolError) {
        do {
            try spool.move(accepted.name, from: .queued, to: accepted.target, as: entry.fileName)
        } catch {
            guard case .rename(_, _, let errno) = error, errno == .noSuchFile else { throw error }
            try spool.deliverNewFile(accepted.record.bytes, named: entry.fileName, into: accepted.target)
        }
    }
}
