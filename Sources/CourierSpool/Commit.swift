import CourierIdentifiers
import CourierPosix
import Glibc

/// The protocol, written once (docs/design.md §10, "The protocol"). In
/// this order, with one policy:
///
/// 1. New files are staged under `tmp/` and, with the open files the
///    transition names, made durable (one `syncfs` for many where it
///    reaches the disk, else an `fsync` each).
/// 2. The ledger lines are appended and fsynced, then any journal appends
///    (each journal opened before the lines, so one that cannot be fails
///    the commit before any line says it was done).
/// 3. Stamps (modification times) are set, before the files move.
/// 4. New files are renamed into place; then, when the transition also
///    moves or removes, their folders are fsynced: a moved name may be the
///    last one of bytes the new files copy. (A report's folders are not:
///    `Transition.NewFile.Kind.report`.)
/// 5. Moves: renames that never replace a name, each of a name that is
///    still what the move expects (`Transition.Expectation`); a dropped
///    file's time is set just before its rename.
/// 6. Removals, after everything else is durable: a removal is the one step
///    that can lose bytes.
/// 7. Every folder that lost a name is fsynced before every folder that
///    gained one (on btrfs the other order can leave one file in both
///    after a power cut).
///
/// A crash between any two steps leaves a spool the next round repairs:
/// see §10 for the state each step may leave and what recovery does.
extension SpoolSession {
    /// Carries `transition` out. A move whose file has gone is reported,
    /// not thrown (a person moved it first); any other failure is thrown,
    /// and what was staged and not published is removed.
    @discardableResult
    package func commit(_ transition: Transition) throws(SpoolError) -> Committed {
        var committed = Committed()
        guard !transition.isEmpty else { return committed }
        // Every commit that creates or moves names does so under the serial
        // lock, a round's too. So a round's listing of the state folders,
        // taken under it, stays exact (`StateListing`; a round's own
        // commits leave the lock's epoch as it was). And one process's
        // fsync of a folder never runs beside another's renames through
        // it: on btrfs one worker's fsync of `sent/` made another's rename
        // into it durable before that worker had synced the folder it
        // left, and a power cut then kept one file under both names.
        let serial = transition.changesNames ? try serialLock() : nil
        defer { withExtendedLifetime(serial) {} }
        var touched = TouchedFolders()
        for folder in unsyncedSources { touched.lost(folder) }
        let tags = try entityTagChanges(transition.tags)
        let files = transition.newFiles + tags.files
        let staged = try stage(files, durable: transition.durable)
        var published = 0
        defer { for (temporary, _) in staged.dropFirst(published) { try? spool.tmp.remove(temporary) } }

        // A journal that cannot be opened (a directory, a folder courier
        // may not write) fails the commit before its lines say it was done.
        let appends = try open(transition.appends + tags.appends, touched: &touched)
        try ledger.append(transition.lines)
        for (append, file) in appends { try carryOut(append, to: file) }
        for stamp in transition.stamps { try set(stamp, touched: &touched) }
        for (temporary, file) in staged {
            try publish(temporary, as: file, touched: &touched, into: &committed)
            published += 1
        }
        if !staged.isEmpty && !(transition.moves.isEmpty && transition.removals.isEmpty) {
            try touched.sync(faults: spool.faults)
        }
        for move in transition.moves { try carryOut(move, touched: &touched, into: &committed) }
        if !transition.removals.isEmpty {
            if !touched.isEmpty { try touched.sync(faults: spool.faults) }
            for removal in transition.removals {
                let folder = try handle(removal.place)
                guard try isStill(removal.expected, removal.name, in: folder) else {
                    committed.absent.append(removal)
                    continue
                }
                do {
                    try spool.faults?.check(.remove, path: folder.displayPath(of: removal.name))
                    if removal.orEmptyDirectory, try folder.status(of: removal.name)?.kind == .directory {
                        try folder.removeDirectory(removal.name)
                    } else {
                        spool.faults?.powerCut?.willRemove(removal.name, in: folder)
                        if try !folder.removeIfPresent(removal.name) { committed.absent.append(removal) }
                    }
                } catch {
                    throw SpoolError(error)
                }
                touched.lost(folder)
            }
        }
        try touched.sync(faults: spool.faults)
        unsyncedSources.removeAll()
        return committed
    }

    /// Step 1: every new file written under `tmp/` with `O_EXCL`, then the
    /// data of those and of `durable` made durable at once.
    private func stage(_ files: [Transition.NewFile], durable: [FileDescriptor]) throws(SpoolError)
        -> [(FileName, Transition.NewFile)]
    {
        let oneSyncForAll = files.count + durable.count > 1 && spool.syncfsReachesDisk
        var staged: [(FileName, Transition.NewFile)] = []
        do throws(SystemError) {
            for file in files {
                var temporary = spool.uniqueTemporaryName(for: file.name)
                var attempts = 0
                while true {
                    do {
                        try spool.tmp.stage(
                            file.bytes, as: temporary, mode: file.mode, syncData: !oneSyncForAll, faults: spool.faults)
                        break
                    } catch let error where error.errno == .fileExists && attempts < 3 {
                        // Someone else's file under the name (a producer's,
                        // in a spool opened to them): the next name.
                        attempts += 1
                        temporary = spool.uniqueTemporaryName(for: file.name)
                    }
                }
                staged.append((temporary, file))
                if let modified = file.modified { try spool.tmp.setModified(temporary, to: modified) }
            }
            if oneSyncForAll {
                try spool.faults?.check(.sync, path: spool.tmp.displayPath)
                try spool.tmp.syncFileSystem()
                spool.faults?.powerCut?.syncedAll()
            } else {
                for file in durable {
                    try spool.faults?.check(.sync, path: file.path)
                    try file.sync()
                }
            }
        } catch {
            for (temporary, _) in staged { try? spool.tmp.remove(temporary) }
            throw SpoolError(error)
        }
        return staged
    }

    /// Before step 2: each journal an append writes, opened (and made, if
    /// new); its folder is fsynced with the others, for a journal the
    /// append created.
    private func open(_ appends: [Transition.Append], touched: inout TouchedFolders) throws(SpoolError)
        -> [(Transition.Append, FileDescriptor)]
    {
        var opened: [(Transition.Append, FileDescriptor)] = []
        for append in appends {
            let folder = try handle(append.place)
            touched.gained(folder)
            do {
                opened.append(
                    (append, try folder.openFile(append.name, flags: O_WRONLY | O_APPEND | O_CREAT, mode: 0o640)))
            } catch {
                throw SpoolError(error)
            }
        }
        return opened
    }

    /// Step 2, for one journal append: one write(2), then fsync.
    private func carryOut(_ append: Transition.Append, to file: FileDescriptor) throws(SpoolError) {
        do {
            let offset = try file.status().size
            try spool.faults?.check(.write, path: file.path)
            try file.write(append.bytes)
            spool.faults?.powerCut?.appended(to: file, at: offset)
            try spool.faults?.check(.sync, path: file.path)
            try file.sync()
            spool.faults?.powerCut?.syncedFile(file)
        } catch {
            throw SpoolError(error)
        }
    }

    /// Step 3. A stamp on a file that has gone is the move's to report.
    private func set(_ stamp: Transition.Stamp, touched: inout TouchedFolders) throws(SpoolError) {
        let folder = try handle(stamp.place)
        switch stamp.time {
        case .now:
            // A file courier may not touch (another user's, read-only)
            // keeps its own time rather than block the round.
            try? folder.touch(stamp.name)
        case .exactly(let time):
            do {
                try folder.setModified(stamp.name, to: time)
            } catch let error where error.errno == .noSuchFile {
                return
            } catch let error where error.errno == Errno(EPERM) || error.errno == Errno(EACCES) {
                try replaceWithOwnCopy(stamp.name, in: folder, modified: time)
                touched.gained(folder)
            } catch {
                throw SpoolError(error)
            }
        }
    }

    /// An explicit time needs the file's owner, and intake makes an entry
    /// by renaming the file a script dropped, which may be the script's
    /// user's. Such a file is replaced by courier's own copy of its bytes
    /// (staged, fsynced, renamed over it), so a crash leaves the old file
    /// or the new one, never neither.
    /// False when the file had gone.
    @discardableResult
    func replaceWithOwnCopy(_ name: FileName, in folder: DirectoryHandle, modified time: Timestamp)
        throws(SpoolError) -> Bool
    {
        let bytes: [UInt8]
        do {
            // An entry is never larger than the largest max-record-size.
            bytes = try folder.openFile(name, flags: O_RDONLY).read(upTo: 64 << 20)
        } catch let error where error.errno == .noSuchFile {
            return false
        } catch {
            throw SpoolError(error)
        }
        let temporary = spool.uniqueTemporaryName(for: name)
        do throws(SystemError) {
            try spool.tmp.stage(bytes, as: temporary, faults: spool.faults)
            try spool.tmp.setModified(temporary, to: time)
            try spool.faults?.check(.rename, path: spool.tmp.displayPath(of: temporary))
            let replaced = spool.faults?.powerCut?.willRename(temporary, in: spool.tmp, to: folder, as: name)
            try spool.tmp.rename(temporary, to: folder, as: name, replacing: true)
            spool.faults?.powerCut?.renamed(temporary, in: spool.tmp, to: folder, as: name, backup: replaced)
        } catch {
            try? spool.tmp.remove(temporary)
            throw SpoolError(error)
        }
        return true
    }

    /// Step 4, for one staged file.
    private func publish(
        _ temporary: FileName, as file: Transition.NewFile, touched: inout TouchedFolders,
        into committed: inout Committed
    ) throws(SpoolError) {
        let folder = try handle(file.place)
        var folders = TouchedFolders()
        try rename(
            temporary, in: spool.tmp, to: folder, as: file.name, replacing: file.replacing, touched: &folders,
            into: &committed)
        if file.kind == .state { touched.add(folders) }
    }

    /// Step 5, for one move.
    private func carryOut(_ move: Transition.Move, touched: inout TouchedFolders, into committed: inout Committed)
        throws(SpoolError)
    {
        let source = try handle(move.from)
        let destination = try handle(move.to)
        guard try isStill(move.expected, move.name, in: source) else {
            committed.vanished.append(move)
            return
        }
        // After the check, which a touch would fail; one courier may not
        // touch keeps its own time.
        try? move.touching?.touch()
        do {
            try rename(
                move.name, in: source, to: destination, as: move.newName, replacing: move.replacing,
                touched: &touched, into: &committed)
        } catch let error where error.errno == .noSuchFile {
            committed.vanished.append(move)
        }
    }

    /// Whether `name` is still what `expected` says (true with no
    /// expectation): a script may have renamed another file over it, or
    /// written into it, since it was read, and that is not what the
    /// transition was built for.
    private func isStill(_ expected: Transition.Expectation?, _ name: FileName, in folder: DirectoryHandle)
        throws(SpoolError) -> Bool
    {
        guard let expected else { return true }
        do { return expected.holds(now: try folder.status(of: name)) } catch { throw SpoolError(error) }
    }

    /// The one rename of the protocol. One that may not replace finds a
    /// name in its way: the same file (the rename was done, and a power cut
    /// undid only its removal of the old name) loses its old name; any
    /// other file there is flagged and the rename is made again.
    private func rename(
        _ name: FileName, in source: DirectoryHandle, to destination: DirectoryHandle, as newName: FileName,
        replacing: Bool, touched: inout TouchedFolders, into committed: inout Committed
    ) throws(SpoolError) {
        var attempts = 0
        while true {
            do {
                try spool.faults?.check(.rename, path: source.displayPath(of: name))
                let replaced = spool.faults?.powerCut?.willRename(name, in: source, to: destination, as: newName)
                try source.rename(name, to: destination, as: newName, replacing: replacing)
                spool.faults?.powerCut?.renamed(name, in: source, to: destination, as: newName, backup: replaced)
                touched.lost(source)
                touched.gained(destination)
                return
            } catch let error where error.errno == .fileExists && !replacing && attempts < 3 {
                attempts += 1
                if try resolveSameFile(name, in: source, as: newName, in: destination, touched: &touched) { return }
                if try resolveFlaggedOccupant(newName, in: destination, touched: &touched) { continue }
                let safe = try flagOccupant(
                    newName, in: destination, mover: source.displayPath(of: name), touched: &touched)
                committed.flagged.append(safe)
            } catch {
                throw SpoolError(error)
            }
        }
    }

    /// True when `name` and `newName` are one file: its old name goes.
    private func resolveSameFile(
        _ name: FileName, in source: DirectoryHandle, as newName: FileName, in destination: DirectoryHandle,
        touched: inout TouchedFolders
    ) throws(SpoolError) -> Bool {
        do throws(SystemError) {
            guard let moving = try source.status(of: name), let there = try destination.status(of: newName),
                moving.isSameFile(as: there)
            else { return false }
            try spool.faults?.check(.remove, path: source.displayPath(of: name))
            spool.faults?.powerCut?.willRemove(name, in: source)
            try source.remove(name)
        } catch {
            throw SpoolError(error)
        }
        touched.lost(source)
        return true
    }

    /// A file in the way that is one file with a flagged file of its name
    /// in `needsAttention/` was flagged already (its flag's rename was cut
    /// in half): its name in the way goes, once the flagged name is
    /// durable, rather than flag it twice. False for any other file.
    private func resolveFlaggedOccupant(_ name: FileName, in folder: DirectoryHandle, touched: inout TouchedFolders)
        throws(SpoolError) -> Bool
    {
        let attention = spool.directory(.needsAttention)
        let status: FileStatus
        do {
            guard let found = try folder.status(of: name), found.links > 1 else { return false }
            status = found
        } catch {
            throw SpoolError(error)
        }
        guard let flagged = try flaggedName(of: name, sameFileAs: status) else { return false }
        try ledger.append(
            LedgerLine(
                time: .now(), actor: actor, subscriber: nil, key: flagged.description, event: .recovered,
                detail: "\(folder.displayPath(of: name)) was one file with needsAttention/\(flagged) "
                    + "(flagging's rename, half done); the old name was removed"))
        do {
            try spool.faults?.check(.sync, path: attention.displayPath)
            try attention.sync()
            spool.faults?.powerCut?.syncedFolder(attention)
            try spool.faults?.check(.remove, path: folder.displayPath(of: name))
            spool.faults?.powerCut?.willRemove(name, in: folder)
            try folder.remove(name)
        } catch {
            throw SpoolError(error)
        }
        touched.lost(folder)
        return true
    }

    /// A file in the way of a rename is flagged as intake flags a drop it
    /// cannot take: its `invalid` line first, then it moves, unchanged, to
    /// `needsAttention/invalid-…`.
    private func flagOccupant(
        _ name: FileName, in folder: DirectoryHandle, mover: String, touched: inout TouchedFolders
    ) throws(SpoolError) -> FileName {
        let attention = spool.directory(.needsAttention)
        let now = Timestamp.now()
        let safe = try FlaggedName.make(for: name, at: now, in: attention)
        try ledger.append(
            LedgerLine(
                time: now, actor: actor, subscriber: nil, key: safe.description, event: .invalid,
                detail: "\(folder.displayPath(of: name)) was in the way of \(mover) moving there; a file cannot "
                    + "take the name of an entry on its way (dropped as \(FlaggedName.printable(name)))"))
        do {
            try spool.faults?.check(.rename, path: folder.displayPath(of: name))
            try folder.rename(name, to: attention, as: safe, replacing: false)
            spool.faults?.powerCut?.renamed(name, in: folder, to: attention, as: safe, backup: nil)
        } catch {
            throw SpoolError(error)
        }
        touched.lost(folder)
        touched.gained(attention)
        return safe
    }

    /// A claim: `name` renamed from `place` into this worker's `sending/`,
    /// never over a name there. No fsync: either folder is a legal place
    /// for an entry, and a crash leaves it in one of them. The same file
    /// under both names (a claim a power cut left half done) loses its old
    /// name and counts as claimed.
    package func claim(_ name: FileName, from place: SpoolPlace) throws(SpoolError) -> ClaimRename {
        let source = try handle(place)
        let sending = spool.directory(.sending)
        do {
            try spool.faults?.check(.rename, path: source.displayPath(of: name))
            try source.rename(name, to: sending, as: name, replacing: false)
            spool.faults?.powerCut?.renamed(name, in: source, to: sending, as: name, backup: nil)
            if !unsyncedSources.contains(where: { $0 === source }) { unsyncedSources.append(source) }
            return .claimed
        } catch let error where error.errno == .noSuchFile {
            return .vanished
        } catch let error where error.errno == .fileExists {
            var touched = TouchedFolders()
            return try resolveSameFile(name, in: source, as: name, in: sending, touched: &touched)
                ? .claimed : .occupied
        } catch {
            throw SpoolError(error)
        }
    }

    /// Etags to keep: one append to each subscriber's journal, after the
    /// ledger lines. A journal grown past the compaction size to twice what
    /// its entities need is instead rewritten with the new lines (staged
    /// and renamed over it, as any state file); one that would not shrink
    /// so is read again only when it has doubled.
    private func entityTagChanges(_ tags: [EntityTagUpdate]) throws(SpoolError)
        -> (files: [Transition.NewFile], appends: [Transition.Append])
    {
        var files: [Transition.NewFile] = []
        var appends: [Transition.Append] = []
        var bySubscriber: [(subscriber: SubscriberName, updates: [EntityTagUpdate])] = []
        for update in tags {
            if let index = bySubscriber.firstIndex(where: { $0.subscriber == update.subscriber }) {
                bySubscriber[index].updates.append(update)
            } else {
                bySubscriber.append((update.subscriber, [update]))
            }
        }
        let journal = EntityTagStore.journalName
        for (subscriber, updates) in bySubscriber {
            let place = SpoolPlace.entityTags(subscriber)
            let folder = try handle(place)
            let size: Int
            do throws(SystemError) {
                size = try folder.status(of: journal)?.size ?? 0
            } catch {
                throw SpoolError(error)
            }
            if size >= max(tagCompaction.size, tagCompaction.nextCheck[subscriber] ?? 0) {
                let bytes = try EntityTagStore.journalBytes(in: folder)
                let compacted = EntityTagJournal.compacted(bytes, adding: updates)
                if compacted.count * 2 <= bytes.count {
                    files.append(Transition.NewFile(compacted, as: journal, in: place, replacing: true))
                    continue
                }
                tagCompaction.nextCheck[subscriber] = size * 2
            }
            appends.append(Transition.Append(EntityTagJournal.lines(for: updates), to: journal, in: place))
        }
        return (files, appends)
    }
}

/// The folders a commit changed, to fsync once each at the end: those that
/// lost a name before those that gained one.
struct TouchedFolders {
    private var losing: [DirectoryHandle] = []
    private var gaining: [DirectoryHandle] = []

    var isEmpty: Bool { losing.isEmpty && gaining.isEmpty }

    mutating func lost(_ folder: DirectoryHandle) {
        if !losing.contains(where: { $0 === folder }) { losing.append(folder) }
    }

    mutating func gained(_ folder: DirectoryHandle) {
        if !gaining.contains(where: { $0 === folder }) { gaining.append(folder) }
    }

    mutating func add(_ other: TouchedFolders) {
        for folder in other.losing { lost(folder) }
        for folder in other.gaining { gained(folder) }
    }

    /// fsyncs each folder once, sources first, and forgets them.
    mutating func sync(faults: FaultPlan?) throws(SpoolError) {
        let order = losing + gaining.filter { folder in !losing.contains { $0 === folder } }
        for folder in order {
            do {
                try faults?.check(.sync, path: folder.displayPath)
                try folder.sync()
                faults?.powerCut?.syncedFolder(folder)
            } catch {
                throw SpoolError(error)
            }
        }
        losing.removeAll()
        gaining.removeAll()
    }
}

/// What a claim's rename came to.
package enum ClaimRename: Sendable, Equatable {
    case claimed
    /// Gone before it could be claimed (a person, or another worker).
    case vanished
    /// An entry of that name is in `sending/` already: the one claimed is a
    /// file dropped under an entry's name, and stays where it was.
    case occupied
}
