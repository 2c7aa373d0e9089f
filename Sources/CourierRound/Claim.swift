import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierRecords
import CourierSpool

/// Claiming: an entry is renamed `queued/` → `sending/` (Postfix's qmgr
/// taking a message into the active queue), then read with the checks a
/// dropped file gets, since a script may have dropped it under an entry's
/// name: a regular file, one link, within `max-record-size`, read whole,
/// and a record whose id is the entry's.
struct Claimer {
    let session: SpoolSession
    let settings: ClaimSettings
    let round: RoundID
    let log: EventLog

    private var spool: Spool { session.spool }

    enum Claim {
        case claimed(DeliveryItem)
        /// In `sending/`, but not to be sent: it needs attention for this reason.
        case refused(EntryName, reason: String)
        /// A twin of a settled entry, flagged under this safe name.
        case flaggedTwin(FileName)
        /// Gone before it could be claimed or read: a person moved it.
        case vanished
    }

    /// The rename decides, and only then is the entry looked at: on a
    /// shared spool another worker may claim it, send it and settle it
    /// between this pass reading its name and this claim, and its settled
    /// file then is no twin.
    func claim(_ entry: EntryName) throws(RoundError) -> Claim {
        let renamed: ClaimRename
        do { renamed = try session.claim(entry.fileName, from: .state(.queued)) } catch { throw .spool(error) }
        switch renamed {
        case .vanished:
            return .vanished
        case .occupied:
            // This round's own claim of that name is in sending/: what is
            // left in queued/ was dropped under its name since.
            guard let safe = try flag(entry, from: .queued, twinOf: "sending/") else { return .vanished }
            return .flaggedTwin(safe)
        case .claimed:
            break
        }
        if let settled = try settledTwin(of: entry) {
            // One file under both names: a rename a power cut left half
            // done, which the ledger tells the direction of.
            if let state = settled.state {
                let kept: SpoolState?
                do { kept = try session.resolveHalfRename(entry.fileName, in: [.sending, state]) } catch {
                    throw .spool(error)
                }
                if let kept, kept != .sending { return .vanished }
                if kept == .sending { return try read(entry) }
            }
            guard let safe = try flag(entry, from: .sending, twinOf: settled.place) else { return .vanished }
            return .flaggedTwin(safe)
        }
        return try read(entry)
    }

    /// The claimed entry's bytes, by the checked read. An entry whose other
    /// name is a dropped file in `queued/` (intake's rename, half done by a
    /// power cut) loses that name first and is read again.
    private func read(_ entry: EntryName) throws(RoundError) -> Claim {
        var checked: CheckedRead
        do { checked = try spool.readChecked(entry.fileName, in: .sending, limit: settings.maxRecordSize) } catch {
            throw .spool(error)
        }
        if case .refused = checked {
            let status: FileStatus?
            do { status = try spool.directory(.sending).status(of: entry.fileName) } catch {
                throw .spool(SpoolError(error))
            }
            do {
                if let status, status.links == 2, let dropped = try session.droppedName(sameFileAs: status),
                    try session.resolveHalfIntake(dropped, into: entry, in: .sending)
                {
                    checked = try spool.readChecked(entry.fileName, in: .sending, limit: settings.maxRecordSize)
                } else if status.map({ $0.links > 1 }) == true,
                    try session.resolveHalfFlag(entry.fileName, in: .sending) == .removedHere
                {
                    // A flag of it, half done: the flagged file needs attention.
                    return .vanished
                }
            } catch {
                throw .spool(error)
            }
        }
        switch checked {
        case .read(let body):
            switch Self.check(body, as: entry) {
            case .success(let fields): return .claimed(DeliveryItem(entry: entry, body: body, fields: fields))
            case .failure(let problem): return .refused(entry, reason: problem.reason)
            }
        case .refused(let reason):
            return .refused(entry, reason: reason)
        case .vanished:
            log(.warning, "sending/\(entry) was moved away by someone else before it was read; not sent")
            return .vanished
        }
    }

    /// Why a claimed entry's bytes cannot go out under its name.
    struct NotTheEntry: Error {
        let reason: String
    }

    /// An entry is a record whose id is the entry's: intake only makes such
    /// entries, but a script may drop any bytes under an entry's name, and
    /// those must not go out under a key they do not carry. The record's
    /// outbox fields, read in this one parse, go with the item.
    static func check(_ body: [UInt8], as entry: EntryName) -> Result<OutboxFields, NotTheEntry> {
        switch Record.parse(body, maximumSize: Int.max) {
        case .failure(let problem): return .failure(NotTheEntry(reason: problem.description))
        case .success(let record) where record.id != entry.key.id:
            return .failure(NotTheEntry(reason: "its id is \(record.id), not the entry's \(entry.key.id)"))
        case .success(let record): return .success(record.outbox)
        }
    }

    /// Where a settled entry (sent, failed, needing attention) of the same
    /// name as the one just claimed is, or another worker's claim of it on a
    /// shared spool, if anywhere: then the claimed one is a file dropped
    /// straight into queued/ under that name.
    private func settledTwin(of entry: EntryName) throws(RoundError) -> (state: SpoolState?, place: String)? {
        for state in [SpoolState.sent, .failed, .needsAttention] {
            do {
                if try spool.directory(state).contains(entry.fileName) { return (state, state.rawValue + "/") }
            } catch {
                throw .spool(SpoolError(error))
            }
        }
        do {
            return try spool.claimFolderElsewhere(holding: entry.fileName).map { (nil, $0.displayPath + "/") }
        } catch {
            throw .spool(error)
        }
    }

    /// A twin would replace the settled entry (or another worker's claim)
    /// and be sent under its key: it is flagged instead, unchanged, as
    /// intake flags a different body under a used id. Nil when it had
    /// vanished.
    private func flag(_ entry: EntryName, from state: SpoolState, twinOf place: String) throws(RoundError)
        -> FileName?
    {
        let now = Timestamp.now()
        do {
            let safe = try FlaggedName.make(for: entry.fileName, at: now, in: spool.directory(.needsAttention))
            let flagging = Transition.flag(
                entry.fileName, from: .state(state), as: safe,
                reason: "\(place)\(entry) already exists; a file dropped under an entry's name cannot replace it",
                actor: .round(round), at: now)
            return try session.commit(flagging).vanished.isEmpty ? safe : nil
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
            time: .now(), actor: .round(round), subscriber: entry.subscriber, key: entry.key.description,
            event: .needsAttention, detail: "subscriber \(entry.subscriber) is not configured")
        do {
            let transition = Transition(lines: [line], moves: [.init(entry, from: .queued, to: .needsAttention)])
            return try session.commit(transition).vanished.isEmpty
        } catch {
            throw .spool(error)
        }
    }
}
