import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool

/// Claiming: an entry is renamed `queued/` → `sending/` (Postfix's qmgr
/// taking a message into the active queue), then read with the checks a
/// dropped file gets, since a script may have dropped it under an entry's
/// name: a regular file, one link, within `max-record-size`, read whole,
/// and a record whose id is the entry's.
struct Claimer {
    let spool: Spool
    let configuration: Configuration
    let ledger: Ledger
    let round: RoundID
    let log: EventLog

    enum Claim {
        case claimed(DeliveryItem)
        /// In `sending/`, but not to be sent: it needs attention for this reason.
        case refused(EntryName, reason: String)
        /// A twin of a settled entry, flagged under this safe name.
        case flaggedTwin(FileName)
        /// Gone before it could be claimed or read: a person moved it.
        case vanished
    }

    func claim(_ entry: EntryName) throws(RoundError) -> Claim {
        if let safe = try flaggedAsTwin(entry) { return .flaggedTwin(safe) }
        do {
            try spool.move(entry.fileName, from: .queued, to: .sending)
        } catch {
            if case .rename(_, _, let errno) = error, errno == .noSuchFile { return .vanished }
            throw .spool(error)
        }
        switch spool.readChecked(entry.fileName, in: .sending, limit: configuration.maxRecordSize) {
        case .read(let body):
            if let problem = Self.problem(with: body, as: entry) { return .refused(entry, reason: problem) }
            return .claimed(DeliveryItem(entry: entry, body: body))
        case .refused(let reason):
            return .refused(entry, reason: reason)
        case .vanished:
            log(.warning, "sending/\(entry) was moved away by someone else before it was read; not sent")
            return .vanished
        }
    }

    /// An entry is a record whose id is the entry's: intake only makes such
    /// entries, but a script may drop any bytes under an entry's name, and
    /// those must not go out under a key they do not carry.
    static func problem(with body: [UInt8], as entry: EntryName) -> String? {
        switch Record.parse(body, maximumSize: Int.max) {
        case .failure(let problem): return problem.description
        case .success(let record) where record.id != entry.key.id:
            return "its id is \(record.id), not the entry's \(entry.key.id)"
        case .success: return nil
        }
    }

    /// A file dropped straight into queued/ under the name of an entry that
    /// already settled (sent, failed, needing attention), or that another
    /// worker of a shared spool is sending, would replace it and be sent
    /// under its key: it is flagged instead, unchanged, as intake flags a
    /// different body under a used id.
    private func flaggedAsTwin(_ entry: EntryName) throws(RoundError) -> FileName? {
        var settled: String?
        for state in [SpoolState.sent, .failed, .needsAttention] {
            do {
                if try spool.directory(state).contains(entry.fileName) { settled = state.rawValue + "/" }
            } catch {
                throw .spool(SpoolError(error))
            }
        }
        do {
            if settled == nil, let folder = try spool.claimFolderElsewhere(holding: entry.fileName) {
                settled = folder.displayPath
            }
        } catch {
            throw .spool(error)
        }
        guard let settled else { return nil }
        let flagger = Flagger(spool: spool, ledger: ledger, round: round, now: .now())
        do {
            return try flagger.flag(
                entry.fileName,
                reason: "\(settled)\(entry) already exists; a file dropped under an entry's name cannot "
                    + "replace it")
        } catch {
            throw .spool(error)
        }
    }

    /// An entry's size in `queued/`, for `max-batch-bytes`; 0 if unknown
    /// (the claim will find out what it is).
    func queuedSize(of entry: EntryName) -> Int {
        let status: FileStatus?
        do { status = try spool.directory(.queued).status(of: entry.fileName) } catch { return 0 }
        return status?.size ?? 0
    }

    /// An entry for a subscriber that is no longer configured: it needs
    /// attention at once, from `queued/`. False when it had vanished.
    func setAsideUnconfigured(_ entry: EntryName) throws(RoundError) -> Bool {
        let line = LedgerLine(
            time: .now(), round: round.value, subscriber: entry.subscriber.value, key: entry.key.description,
            event: .needsAttention, detail: "subscriber \(entry.subscriber) is not configured")
        do {
            try ledger.append(line)
            try spool.move(entry.fileName, from: .queued, to: .needsAttention)
            try spool.sync([.queued, .needsAttention])
        } catch {
            if case .rename(_, _, let errno) = error, errno == .noSuchFile { return false }
            throw .spool(error)
        }
        return true
    }
}
