import CourierIdentifiers
import CourierPosix
import CourierSpool
import CourierSupport

/// What `courier prune` removed (or would remove, in a dry run).
package struct PruneReport: Sendable, Equatable {
    /// The names of the files in `ledger/`: a day's own, and its workers'.
    package var ledgerFiles: [String] = []
    package var sentEntries: [String] = []
    /// Only with `failed-retention`.
    package var failedEntries: [String] = []
    package var temporaryLeftovers: [String] = []
    /// `SUB/ID` of each etag kept in `.courier/etags/` that aged out.
    package var entityTags: [String] = []

    package var total: Int {
        ledgerFiles.count + sentEntries.count + failedEntries.count + temporaryLeftovers.count + entityTags.count
    }
}

/// Keeps the spool to its retention: ledger day files, `sent/` entries and
/// kept etags older than `retention`, and `tmp/` leftovers older than 36 h.
/// `failed/` entries go only under `failed-retention`, counted from when
/// they entered `failed/`, each with a `deleted` ledger line: they were
/// never delivered. `needsAttention/` waits for a person, always.
package struct Pruner {
    let session: SpoolSession
    let retention: Duration
    let failedRetention: Duration?
    let now: Timestamp
    let dryRun: Bool

    /// maildir's rule: a file in tmp/ untouched for 36 hours belongs to a
    /// writer that died; no live writer takes that long.
    package static let temporaryLeftoverAge: Duration = .seconds(36 * 3600)
    /// Removals per commit: a prune of a million entries holds this many
    /// names at a time, not all of them.
    static let chunk = 4096

    package init(
        session: SpoolSession, retention: Duration, failedRetention: Duration? = nil, now: Timestamp = .now(),
        dryRun: Bool
    ) {
        self.session = session
        self.retention = retention
        self.failedRetention = failedRetention
        self.now = now
        self.dryRun = dryRun
    }

    private var spool: Spool { session.spool }

    /// Safe to run twice, or beside a round: it removes only what is old,
    /// and a file already gone counts as removed.
    package func run() throws(SpoolError) -> PruneReport {
        // One prune at a time among the workers of a shared spool.
        let serial = try session.serialLock()
        defer { withExtendedLifetime(serial) {} }
        var report = PruneReport()
        let cutoff = now - retention
        // A day file holds events up to the end of its day: it goes when
        // that whole day is older than the cutoff, with every worker's
        // file of that day, by the day in their names.
        let days = try Ledger.dayFiles(in: spool.ledgerDirectory).filter { $0.day < cutoff.utcDay }.map(\.name)
        try remove(days, in: .ledger)
        report.ledgerFiles = days.map(\.description)
        report.sentEntries = try removeOld(in: .state(.sent), olderThan: cutoff)
        if let failedRetention {
            report.failedEntries = try removeOld(
                in: .state(.failed), olderThan: now - failedRetention, by: \.changed
            ) { name in
                LedgerLine(
                    time: now, actor: .prune, subscriber: EntryName(fileName: name)?.subscriber,
                    key: EntryName(fileName: name)?.key.description ?? name.description, event: .deleted,
                    detail: "removed from failed/ after failed-retention \(Units.describe(failedRetention))")
            }
        }
        report.temporaryLeftovers = try removeOld(in: .tmp, olderThan: now - Self.temporaryLeftoverAge)
        // An etag is rewritten whenever the server gives one, so an old
        // file is an entity nothing wrote for as long as the ledger keeps.
        // The journal is rewritten without them; an older courier's file
        // per entity goes by its mtime (a listing skips the journal's
        // dot name).
        let tags = EntityTagStore(spool: spool)
        for subscriber in try tags.subscribers() {
            if let pruned = try tags.journalPruned(of: subscriber, olderThan: cutoff) {
                if !dryRun { try session.commit(Transition(newFiles: [pruned.file])) }
                report.entityTags += pruned.removed.map { "\(subscriber)/\($0)" }
            }
            report.entityTags += try removeOld(in: .entityTags(subscriber), olderThan: cutoff).map {
                "\(subscriber)/\($0)"
            }
        }
        return report
    }

    /// Removes what is older than `cutoff` by `age` (the modification time
    /// unless told otherwise), each with the line `noting` gives, if any:
    /// the line is written first, so a crash between the two leaves the
    /// entry, and its line is written again by the next prune.
    private func removeOld(
        in place: SpoolPlace, olderThan cutoff: Timestamp, by age: KeyPath<FileStatus, Timestamp> = \.modified,
        noting: (FileName) -> LedgerLine? = { _ in nil }
    ) throws(SpoolError) -> [String] {
        let directory = try session.folder(place)
        var old: [FileName] = []
        do {
            let stream = try directory.entries()
            while let name = try stream.next() {
                guard let status = try directory.status(of: name), status.kind != .directory,
                    status[keyPath: age] < cutoff
                else { continue }
                old.append(name)
            }
        } catch {
            throw SpoolError(error)
        }
        try remove(old, in: place, noting: noting)
        return old.map(\.description).sorted()
    }

    private func remove(_ names: [FileName], in place: SpoolPlace, noting: (FileName) -> LedgerLine? = { _ in nil })
        throws(SpoolError)
    {
        guard !dryRun else { return }
        var start = 0
        while start < names.count {
            let chunk = names[start..<min(start + Self.chunk, names.count)]
            start += chunk.count
            var transition = Transition(removals: chunk.map { .init($0, in: place) })
            transition.lines = chunk.compactMap(noting)
            try session.commit(transition)
        }
    }
}
