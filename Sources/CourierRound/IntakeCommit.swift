import CourierPosix
import CourierRecords
import CourierSpool

/// Intake's group commit: makes a group of accepted files durable entries.
/// The dropped files' data is synced first (one syncfs for the group), the
/// copies for a record's second and later subscribers are staged and
/// fsynced under `tmp/`, the group's ledger lines are appended with one
/// fsync, then everything is renamed into place and the folders fsynced.
/// The dropped file itself becomes the first subscriber's entry by a
/// rename: its bytes are the body, so it is never copied. An entry the
/// round will send now is renamed straight into `sending/` — claimed at
/// birth; recovery returns it to `queued/` if the round dies. A crash
/// anywhere leaves the dropped file (or its entry) in place, and intake of
/// it again finds identical entries: a duplicate, not a conflict.
struct IntakeCommit {
    let spool: Spool
    let ledger: Ledger
    let round: RoundID

    /// Returns the entries that went to `sending/`, with their bytes.
    func commit(_ group: [Intake.Accepted], sendNow: (EntryName) -> Bool, into report: inout IntakeReport)
        throws(SpoolError) -> [DeliveryItem]
    {
        guard !group.isEmpty else { return [] }
        report.groups += 1
        try syncDroppedFiles(group)
        let now = Timestamp.now()
        // Asked once per entry: the answer may count what stays queued. The
        // dropped file itself goes to sending/ only if nobody has written to
        // it since it was read: what is sent must be what sent/ keeps. A
        // changed one waits in queued/, where a claim reads it again.
        let targets = group.map { accepted in
            accepted.entries.enumerated().map { index, entry in
                accepted.target == .queued && (index > 0 || accepted.isUnchanged) && sendNow(entry)
                    ? SpoolState.sending : accepted.target
            }
        }
        var staged: [(temporary: FileName, entry: EntryName, target: SpoolState)] = []
        // Whatever was staged and not renamed when this fails goes: a
        // failed group leaves no orphans in tmp/.
        var renamed = 0
        defer { for (temporary, _, _) in staged.dropFirst(renamed) { try? spool.tmp.remove(temporary) } }
        for (accepted, targets) in zip(group, targets) {
            for (entry, target) in zip(accepted.entries, targets).dropFirst() {
                staged.append((try spool.stageFile(accepted.record.bytes, for: entry.fileName), entry, target))
            }
        }
        try ledger.append(group.flatMap { lines($0, now: now) })
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
        var claimed: [DeliveryItem] = []
        for (accepted, targets) in zip(group, targets) {
            if let first = accepted.entries.first, let target = targets.first {
                try finish(accepted, as: first, into: target)
            } else {
                try removeRepeat(accepted)
            }
            report.accepted += accepted.entries.count
            report.duplicates += accepted.duplicates.count
            if accepted.target == .awaitingRoute { report.routesKept += 1 }
            for (entry, target) in zip(accepted.entries, targets) where target == .sending {
                claimed.append(DeliveryItem(entry: entry, body: accepted.record.bytes))
            }
        }
        var touched: Set<SpoolState> = [.queued]
        if group.contains(where: { $0.target == .awaitingRoute }) { touched.insert(.awaitingRoute) }
        if !claimed.isEmpty { touched.insert(.sending) }
        try spool.sync(touched)
        return claimed
    }

    /// The dropped bytes reach the disk before any name or line says they
    /// are an entry: after a power cut an entry is never empty. One syncfs
    /// covers the whole group (the files are on the spool's file system);
    /// a group of one takes the cheaper fsync, and so does each file where
    /// syncfs does nothing (FUSE: a spool on GlusterFS).
    private func syncDroppedFiles(_ group: [Intake.Accepted]) throws(SpoolError) {
        let taken = group.filter { !$0.entries.isEmpty }
        do {
            if taken.count > 1 && spool.syncfsReachesDisk {
                try spool.faults?.check(.sync)
                try spool.directory(.queued).syncFileSystem()
                return
            }
            for accepted in taken {
                try spool.faults?.check(.sync)
                try accepted.file.sync()
            }
        } catch {
            throw SpoolError(error)
        }
    }

    /// `accepted` (or `awaitingRoute`) per new entry, `duplicate` per repeat.
    private func lines(_ accepted: Intake.Accepted, now: Timestamp) -> [LedgerLine] {
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

    /// A dropped file every subscriber already had goes.
    private func removeRepeat(_ accepted: Intake.Accepted) throws(SpoolError) {
        do { try spool.directory(.queued).remove(accepted.name) } catch {
            throw SpoolError(error)
        }
    }

    /// The dropped file becomes the first entry.
    private func finish(_ accepted: Intake.Accepted, as first: EntryName, into target: SpoolState)
        throws(SpoolError)
    {
        // An entry's modification time is its intake time: route-wait and
        // prune count from it, not from when a script wrote it. A file
        // courier may not touch (read-only, another owner) keeps its own
        // time rather than block the round.
        try? spool.directory(.queued).touch(accepted.name)
        try takeDroppedFile(accepted, as: first, into: target)
    }

    /// The dropped file becomes the first entry by rename. A person who
    /// moved it away meanwhile does not lose the record: its bytes, read and
    /// checked, are written as the entry instead.
    private func takeDroppedFile(_ accepted: Intake.Accepted, as entry: EntryName, into target: SpoolState)
        throws(SpoolError)
    {
        do {
            try spool.move(accepted.name, from: .queued, to: target, as: entry.fileName)
        } catch {
            guard case .rename(_, _, let errno) = error, errno == .noSuchFile else { throw error }
            try spool.deliverNewFile(accepted.record.bytes, named: entry.fileName, into: target)
        }
    }
}

extension Intake.Accepted {
    /// The dropped file has the size and time it had when its bytes were
    /// read (checked after the group's sync, just before the rename).
    var isUnchanged: Bool {
        guard let before = readAs, let now = try? file.status() else { return false }
        return now.size == before.size && now.modified == before.modified && now.size == record.bytes.count
    }
}
