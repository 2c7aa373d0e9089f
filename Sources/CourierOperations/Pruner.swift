import CourierPosix
import CourierSpool

/// What `courier prune` removed (or would remove, in a dry run).
public struct PruneReport: Sendable, Equatable {
    public var ledgerFiles: [String] = []
    public var sentEntries: [String] = []
    public var temporaryLeftovers: [String] = []

    public var total: Int { ledgerFiles.count + sentEntries.count + temporaryLeftovers.count }
}

/// Keeps the spool to its retention: ledger day files and `sent/`
/// entries older than `retention`, and `tmp/` leftovers older than 36 h.
/// Never touches `failed/` or `needsAttention/`: those wait for a person.
public struct Pruner {
    let spool: Spool
    let retention: Duration
    let now: Timestamp
    let dryRun: Bool

    /// maildir's rule: a file in tmp/ untouched for 36 hours belongs to a
    /// writer that died; no live writer takes that long.
    public static let temporaryLeftoverAge: Duration = .seconds(36 * 3600)

    public init(spool: Spool, retention: Duration, now: Timestamp = .now(), dryRun: Bool) {
        self.spool = spool
        self.retention = retention
        self.now = now
        self.dryRun = dryRun
    }

    /// Safe to run twice, or beside a round: it removes only what is old,
    /// and a file already gone counts as removed.
    public func run() throws(SpoolError) -> PruneReport {
        var report = PruneReport()
        let cutoff = now - retention
        // A day file holds events up to the end of its day: it goes when
        // that whole day is older than the cutoff.
        for (day, name) in try Ledger.dayFiles(in: spool.ledgerDirectory) where day < cutoff.utcDay {
            do { try remove(name, in: spool.ledgerDirectory) } catch { throw SpoolError(error) }
            report.ledgerFiles.append(day)
        }
        report.sentEntries = try removeOld(in: spool.directory(.sent), olderThan: cutoff)
        report.temporaryLeftovers = try removeOld(
            in: spool.tmp, olderThan: now - Self.temporaryLeftoverAge)
        return report
    }

    private func removeOld(in directory: DirectoryHandle, olderThan cutoff: Timestamp) throws(SpoolError) -> [String] {
        var removed: [String] = []
        do throws(SystemError) {
            let stream = try directory.entries()
            while let name = try stream.next() {
                guard let status = try directory.status(of: name), status.kind != .directory, status.modified < cutoff
                else { continue }
                try remove(name, in: directory)
                removed.append(name.description)
            }
        } catch {
            throw SpoolError(error)
        }
        return removed.sorted()
    }

    private func remove(_ name: FileName, in directory: DirectoryHandle) throws(SystemError) {
        guard !dryRun else { return }
        try directory.remove(name)
    }
}
