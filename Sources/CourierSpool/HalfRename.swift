import CourierIdentifiers
import CourierPosix

/// One file under two names of the spool: a rename a power cut left half
/// done (the new name made durable, the removal of the old one not: btrfs
/// can do this when the new folder reaches the disk before the old one), or
/// `link` without its `unlink` on a file system without RENAME_NOREPLACE.
/// Courier's own renames are the only way one file gets two names in the
/// state folders, so such a pair is resolved here, never flagged: the name
/// the rename was making is kept, the other goes. A file a script
/// hard-linked from anywhere else has no second name in a state folder, and
/// is still refused by the checked read.
extension SpoolSession {
    /// Resolves an entry name held as one file by several state folders:
    /// keeps it in the state its last ledger line says it went to (ledger
    /// first: the line of the rename is on disk), removes it from the
    /// others with a `recovered` line. Returns the state kept; nil when the
    /// names are not one file (then it is no half rename, and nothing is
    /// done).
    package func resolveHalfRename(_ name: FileName, in states: [SpoolState]) throws(SpoolError) -> SpoolState? {
        var statuses: [(SpoolState, FileStatus)] = []
        do {
            for state in states {
                if let status = try spool.directory(state).status(of: name) { statuses.append((state, status)) }
            }
        } catch {
            throw SpoolError(error)
        }
        guard statuses.count > 1, let first = statuses.first?.1,
            statuses.allSatisfy({ $0.1.isSameFile(as: first) })
        else { return nil }
        let held = statuses.map(\.0)
        let entry = EntryName(fileName: name)
        let last = try LastEvents(directory: spool.ledgerDirectory).last(
            subscriber: entry?.subscriber, key: entry?.key.description ?? name.description)
        let kept = Self.destination(of: last?.event, among: held)
        let now = Timestamp.now()
        var transition = Transition()
        transition.lines = [
            LedgerLine(
                time: now, actor: actor, subscriber: entry?.subscriber,
                key: entry?.key.description ?? name.description, event: .recovered,
                detail: "was in " + held.map { $0.rawValue + "/" }.joined(separator: " and ")
                    + " as one file (a rename a power cut left half done); kept \(kept.rawValue)/")
        ]
        transition.removals = held.filter { $0 != kept }.map { .init(name, in: .state($0)) }
        try commit(transition)
        return kept
    }

    /// A dropped file in `queued/` that is one file with the entry `entry`
    /// in `state`: intake's rename of it into that entry, half done. The
    /// dropped name goes, with a `recovered` line. False when they are not
    /// one file.
    @discardableResult
    package func resolveHalfIntake(_ dropped: FileName, into entry: EntryName, in state: SpoolState) throws(SpoolError)
        -> Bool
    {
        do {
            guard let drop = try spool.directory(.queued).status(of: dropped),
                let stored = try spool.directory(state).status(of: entry.fileName), drop.isSameFile(as: stored)
            else { return false }
        } catch {
            throw SpoolError(error)
        }
        try commit(
            Transition(
                lines: [
                    LedgerLine(
                        time: .now(), actor: actor, subscriber: entry.subscriber, key: entry.key.description,
                        event: .recovered,
                        detail: "queued/\(FlaggedName.printable(dropped)) was one file with \(state.rawValue)/\(entry) "
                            + "(intake's rename, half done by a power cut); the dropped name was removed")
                ], removals: [.init(dropped, in: .state(.queued))]))
        return true
    }

    /// A file in `state` (a dropped file in `queued/`, a claimed twin in
    /// `sending/`, a file that was in a move's way) that is one file with a
    /// flagged file in `needsAttention/` made of it (`invalid-TIME-SAFE`):
    /// flagging's rename, half done. The flag's `invalid` line came before
    /// its rename, so the old name goes, with a `recovered` line; unless the
    /// name is the flagged name itself and its last line is `resent` (a
    /// person's resend of the flagged file, half done): then the flagged
    /// name goes and the file goes on to intake. Nil when no flagged file
    /// of its name is that file.
    package func resolveHalfFlag(_ name: FileName, in state: SpoolState = .queued) throws(SpoolError) -> HalfFlag? {
        let status: FileStatus
        do {
            guard let found = try spool.directory(state).status(of: name), found.links > 1 else { return nil }
            status = found
        } catch {
            throw SpoolError(error)
        }
        guard let flagged = try flaggedName(of: name, sameFileAs: status) else { return nil }
        var resent = false
        if flagged == name && state == .queued {
            let last = try LastEvents(directory: spool.ledgerDirectory).last(subscriber: nil, key: name.description)
            resent = last?.event == .resent
        }
        let detail =
            resent
            ? "queued/\(flagged) was one file with needsAttention/\(flagged) (a resend, half done by a power cut); "
                + "the flagged name was removed"
            : "\(state.rawValue)/\(FlaggedName.printable(name)) was one file with needsAttention/\(flagged) "
                + "(flagging's rename, half done by a power cut); the old name was removed"
        try commit(
            Transition(
                lines: [
                    LedgerLine(
                        time: .now(), actor: actor, subscriber: nil, key: flagged.description, event: .recovered,
                        detail: detail)
                ],
                removals: [resent ? .init(flagged, in: .state(.needsAttention)) : .init(name, in: .state(state))]))
        return resent ? .keptHere : .removedHere
    }

    /// The flagged name in `needsAttention/` made of `name` that is one
    /// file with `status`, if any: found by inode number in the listing,
    /// confirmed by status.
    func flaggedName(of name: FileName, sameFileAs status: FileStatus) throws(SpoolError) -> FileName? {
        let safe = FlaggedName.safeComponent(
            FlaggedName.droppedPart(of: name).map { FileName(bytes: Array($0)) } ?? name)
        let attention = spool.directory(.needsAttention)
        do {
            let stream = try attention.entries()
            while let candidate = try stream.next() {
                guard let part = FlaggedName.droppedPart(of: candidate), part.starts(with: Array(safe.utf8)),
                    stream.lastInode == status.inode, let there = try attention.status(of: candidate),
                    there.isSameFile(as: status)
                else { continue }
                return candidate
            }
        } catch {
            throw SpoolError(error)
        }
        return nil
    }

    /// The dropped name in `queued/` (not an entry's) that is one file with
    /// `status`, if any: the other half of intake's rename. `queued/` is
    /// listed once per session for this (only ever after a power cut left
    /// such a pair), by inode number, and the match confirmed by status.
    package func droppedName(sameFileAs status: FileStatus) throws(SpoolError) -> FileName? {
        if droppedInodes == nil {
            var found: [UInt64: FileName] = [:]
            do {
                let stream = try spool.directory(.queued).entries()
                while let name = try stream.next() {
                    if EntryName(fileName: name) == nil { found[stream.lastInode] = name }
                }
            } catch {
                throw SpoolError(error)
            }
            droppedInodes = found
        }
        guard let name = droppedInodes?[status.inode] else { return nil }
        do {
            guard let there = try spool.directory(.queued).status(of: name), there.isSameFile(as: status) else {
                return nil
            }
        } catch {
            throw SpoolError(error)
        }
        return name
    }

    /// Where the rename the last ledger line records was taking the item;
    /// among `held`, the state to keep.
    static func destination(of event: LedgerEvent?, among held: [SpoolState]) -> SpoolState {
        let wanted: [SpoolState]
        switch event {
        case .sent?: wanted = [.sent]
        case .needsAttention?, .invalid?, .routeTimeout?: wanted = [.needsAttention]
        case .acknowledged?: wanted = [.failed]
        case .retry?: wanted = [.sending]
        case .accepted?, .awaitingRoute?: wanted = [.sending, .queued, .awaitingRoute]
        // Back to queued/ (recovered, resent, deferred, backfilled), or on
        // from there: a claim has taken it into sending/ since.
        default: wanted = [.queued, .sending]
        }
        // A state no line names: one the next round acts on.
        let fallback: [SpoolState] = [.queued, .awaitingRoute, .needsAttention, .failed, .sent, .sending]
        return (wanted + fallback).first { held.contains($0) } ?? held[0]
    }
}

/// How a flag's rename half done was resolved (`resolveHalfFlag`).
package enum HalfFlag: Sendable, Equatable {
    /// The name looked at went; the flagged file is in `needsAttention/`.
    case removedHere
    /// The flagged name went; the file stays where it was looked at.
    case keptHere
}
