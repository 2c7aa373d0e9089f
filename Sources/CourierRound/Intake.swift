import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierRecords
import CourierSpool
import Glibc

/// Counts of one intake pass.
package struct IntakeReport: Sendable, Equatable {
    package var accepted = 0
    package var invalid = 0
    package var duplicates = 0
    /// Files that did not parse but are younger than `settle`: left for
    /// the next round, since a script may still be writing them.
    package var settling = 0
    /// The safe names the invalid files got in needsAttention/.
    package var flagged: [String] = []
    /// Group commits made: one ledger fsync and one folder fsync each.
    package var groups = 0
    /// Route records kept in `awaitingRoute/`, and workouts put there to
    /// wait for theirs: the routes step has work after intake.
    package var routesKept = 0

    mutating func add(_ counts: IntakeReport) {
        accepted += counts.accepted
        invalid += counts.invalid
        duplicates += counts.duplicates
        settling += counts.settling
        flagged += counts.flagged
        groups += counts.groups
        routesKept += counts.routesKept
    }
}

/// Intake, the first stage after recovery (Postfix's pickup and cleanup):
/// turns every file a script dropped into `queued/` under any name into one
/// `KEY@SUB.json` entry per subscriber, or flags it, or keeps a route record
/// for its workout. Accepted files are made durable in groups by
/// `IntakeCommit`.
package struct Intake {
    let session: SpoolSession
    let settings: IntakeSettings
    let round: RoundID
    /// Whose files are not a producer's (`Accepted.isForeign`).
    let ownUser = geteuid()

    var spool: Spool { session.spool }

    /// `openFileLimit`: the process's, as it found it; tests name another.
    init(session: SpoolSession, settings: IntakeSettings, round: RoundID, openFileLimit: Int? = Intake.openFileLimit) {
        self.session = session
        self.settings = settings
        self.round = round
        // Where syncfs does nothing (FUSE), each file is fsynced anyway: a
        // bigger group would save little and hold the serial lock longer
        // against the other workers.
        groupSizeBehindCommit =
            session.spool.syncfsReachesDisk
            ? Self.groupSizeBehindCommit(openFileLimit: openFileLimit, connections: settings.connections)
            : Self.groupSize
        droppedFilesAtMost = Self.droppedFilesAtMost(
            openFileLimit: openFileLimit, connections: settings.connections, groupSize: groupSizeBehindCommit)
    }

    /// Dropped files committed together: one ledger fsync and one directory
    /// fsync per group. A group holds its records' bytes until it commits,
    /// so it is bounded by bytes too: memory stays flat whatever
    /// `max-record-size` allows.
    static let groupSize = 256
    /// A group that would wait behind a commit already out goes on
    /// filling up to this: one `syncfs`, one ledger fsync and one fsync
    /// per folder then cover up to four times the files. (A fixed 1,024
    /// delays a round's first request by reading 768 files more.) Three
    /// groups' dropped files are open at once at most, so it stays within
    /// the open-file limit as the process found it (raised at start),
    /// with 256 left for folders and the like and one for each connection
    /// the subscribers' `concurrency` allows; never below `groupSize`. (With
    /// 256 alone left, three subscribers at `concurrency = 256` ran out of
    /// files at a limit of 1,500 that groups of 256 kept well within.)
    let groupSizeBehindCommit: Int
    /// The open-file limit as the process found it.
    static let openFileLimit = OpenFileLimit.current

    static func groupSizeBehindCommit(openFileLimit: Int?, connections: Int = 0) -> Int {
        guard let openFileLimit else { return 1024 }
        return min(1024, max(groupSize, (openFileLimit - otherDescriptors - connections) / 3))
    }

    /// Descriptors beside the dropped files and the connections: folders,
    /// the ledger, libcurl's own.
    static let otherDescriptors = 256

    /// The room the open-file limit leaves for dropped files: the groups
    /// handed to commits, the group filling and what is read ahead. Three
    /// groups where the limit has them; less where `groupSize`'s floor made
    /// the groups bigger than the limit's third (a limit of 700 and groups
    /// of 256). Reading ahead stays within it, and is what gives way; two
    /// groups handed may still hold more than it, as before reading ahead,
    /// and a limit that low runs out elsewhere first.
    let droppedFilesAtMost: Int

    static func droppedFilesAtMost(openFileLimit: Int?, connections: Int, groupSize: Int) -> Int {
        guard let openFileLimit else { return 3 * groupSize }
        return max(0, min(3 * groupSize, openFileLimit - otherDescriptors - connections))
    }

    /// The descriptors a pass may have open at once: its dropped files, a
    /// connection for each slot, and the rest.
    var descriptorsAtMost: Int { droppedFilesAtMost + settings.connections + Self.otherDescriptors }

    static let groupBytes = 4 << 20

    /// An accepted record waiting for its group's commit.
    /// A class: it owns the open dropped file, and the group commit passes
    /// it through several loops, where a struct of a dozen references was
    /// copied (retained and released) at each.
    final class Accepted {
        let name: FileName
        /// The dropped file, open: its data is fsynced before it becomes an
        /// entry (Postfix's pickup does the same before cleanup takes it).
        let file: FileDescriptor
        /// The open file's size and time as its bytes were read (the status
        /// the checked read took of it).
        let readAs: FileStatus?
        let record: Record
        let target: SpoolState
        /// New entries; the first takes the dropped file by rename.
        let entries: [EntryName]
        let duplicates: [(EntryName, SpoolState)]
        /// Dropped by another user (a member of the producers group).
        let isForeign: Bool

        init(
            name: FileName, file: FileDescriptor, readAs: FileStatus?, record: Record, target: SpoolState,
            entries: [EntryName], duplicates: [(EntryName, SpoolState)], ownUser: uid_t
        ) {
            self.name = name
            self.file = file
            self.readAs = readAs
            self.record = record
            self.target = target
            self.entries = entries
            self.duplicates = duplicates
            isForeign = readAs.map { $0.owner != ownUser } ?? false
        }
    }

    /// Takes in every dropped file of `queued/`, all into `queued/` (or
    /// `awaitingRoute/`): intake on its own, as tests and tools drive it.
    /// A round takes files in as its delivery pass meets them instead
    /// (`IntakeSession`, driven by `DeliveryFeed`).
    func run() throws(SpoolError) -> IntakeReport {
        let stream: DirectoryStream
        do { stream = try spool.directory(.queued).entries() } catch {
            throw SpoolError(error)
        }
        let session = IntakeSession(intake: self)
        while true {
            let name: FileName?
            do { name = try stream.next() } catch { throw SpoolError(error) }
            guard let name else { break }
            if EntryName(fileName: name) != nil { continue }
            try session.offer(name, kind: stream.lastKind)
            if session.isFull { _ = try session.commit() }
        }
        _ = try session.commit()
        return session.report
    }

    /// A dropped file opened, read and parsed ahead of its turn
    /// (`readAhead`), while the session was busy with a commit.
    struct ReadAhead {
        let file: FileDescriptor
        let opened: FileStatus
        let record: Record
    }

    /// The part of intake that needs nothing but the file: it is opened,
    /// checked, read and parsed, as `read` does, and may be done while a
    /// commit holds the session. Only the common case: a regular file of
    /// one name, within the size limit, that parses. For anything else
    /// (and on any error) nil, and `take` sees to the file in its turn, as
    /// if it had not been read ahead.
    func readAhead(_ name: FileName, kind: FileStatus.Kind?) -> ReadAhead? {
        guard kind == .regular,
            let (read, file, opened) = try? spool.openChecked(name, in: .queued, limit: settings.maxRecordSize),
            case .read(let bytes) = read, let file, let opened,
            case .success(let record) = Record.parse(bytes, maximumSize: settings.maxRecordSize)
        else { return nil }
        return ReadAhead(file: file, opened: opened, record: record)
    }

    /// Validates one dropped file; flags it, leaves it, or returns its plan.
    /// `unsettled`: the entries of this round's groups that are not on disk
    /// yet, the group this file joins and those handed to a commit that has
    /// not finished; the file's own entries are added to it. `ahead`:
    /// the file as `readAhead` read it, if it did.
    func take(
        _ name: FileName, kind: FileStatus.Kind?, readAhead ahead: ReadAhead? = nil,
        unsettled: inout [EntryName: [UInt8]], lookup: inout EntryLookup, into report: inout IntakeReport
    )
        throws(SpoolError) -> Accepted?
    {
        let taken: (Record, FileDescriptor, FileStatus?)?
        if let ahead {
            taken = (ahead.record, ahead.file, ahead.opened)
        } else {
            taken = try read(name, kind: kind, into: &report)
        }
        guard let (record, file, readAs) = taken else { return nil }
        switch SubscriberChoice.of(record, among: settings.subscribers) {
        case .chosen(let subscribers):
            return try plan(
                name, file: file, readAs: readAs, record: record, for: subscribers,
                unsettled: &unsettled, lookup: &lookup, into: &report)
        case .route(let workout):
            try keepRoute(record, for: workout, from: name, readAs: readAs, report: &report)
            return nil
        case .refused(let reason):
            try flag(name, reason: reason, readAs: readAs, report: &report)
            return nil
        }
    }

    /// The dropped file as a record, with the file kept open for its fsync;
    /// nil when it was flagged, has vanished, or may still be being written
    /// (the settle rule).
    /// `kind`: what the directory listing said the name is; nil when it
    /// did not say, and an `lstat` asks. Nothing but a regular file is
    /// opened (a device could do something on open).
    private func read(_ name: FileName, kind listed: FileStatus.Kind?, into report: inout IntakeReport)
        throws(SpoolError) -> (Record, FileDescriptor, FileStatus?)?
    {
        var kind = listed
        if kind == nil {
            do { kind = try spool.directory(.queued).status(of: name)?.kind } catch {
                throw SpoolError(error)
            }
        }
        guard let kind else { return nil }
        guard kind == .regular else {
            try flag(name, reason: "not a regular file (\(kind.words)); it was not followed or read", report: &report)
            return nil
        }
        let bytes: [UInt8]
        let file: FileDescriptor
        let opened: FileStatus?
        switch try spool.openChecked(name, in: .queued, limit: settings.maxRecordSize) {
        case (.vanished, _, _), (.read, nil, _): return nil
        case (.refused(let reason), _, _):
            if try isHalfTakenIn(name) {
                report.duplicates += 1
                return nil
            }
            switch try session.resolveHalfFlag(name) {
            case .removedHere?: return nil
            // A resend of a flagged file, half done: now with one name.
            case .keptHere?: return try read(name, kind: listed, into: &report)
            case nil: break
            }
            try flag(name, reason: reason, report: &report)
            return nil
        case (.read(let content), let openedFile?, let status):
            bytes = content
            file = openedFile
            opened = status
        }
        switch Record.parse(bytes, maximumSize: settings.maxRecordSize) {
        case .success(let record):
            return (record, file, opened)
        case .failure(let problem) where problem.mayBeIncomplete && isSettling(file):
            report.settling += 1
            return nil
        case .failure(let problem):
            try flag(name, reason: problem.description, readAs: opened, report: &report)
            return nil
        }
    }

    /// A dropped file with a second name that is one of its own record's
    /// entries: intake renamed it, and a power cut kept both names. Its
    /// dropped name goes (`resolveHalfIntake`); any other hard link is
    /// still refused.
    private func isHalfTakenIn(_ name: FileName) throws(SpoolError) -> Bool {
        let links: Int
        do { links = try spool.directory(.queued).status(of: name)?.links ?? 1 } catch { throw SpoolError(error) }
        guard links == 2,
            case .read(let bytes) = try spool.openChecked(name, in: .queued, limit: settings.maxRecordSize, links: 2)
                .read,
            case .success(let record) = Record.parse(bytes, maximumSize: settings.maxRecordSize),
            case .chosen(let subscribers) = SubscriberChoice.of(record, among: settings.subscribers)
        else { return false }
        for subscriber in subscribers {
            let entry = EntryName(key: DeliveryKey(id: record.id), subscriber: subscriber.name)
            for state in SpoolState.allCases where try session.resolveHalfIntake(name, into: entry, in: state) {
                return true
            }
        }
        return false
    }

    /// Modified less than `settle` ago: a script may still be writing it.
    private func isSettling(_ file: FileDescriptor) -> Bool {
        guard let status = try? file.status() else { return false }
        return Timestamp.now() - status.modified < settings.settle
    }

    /// The entries a record makes, checked against what exists: the same
    /// bytes are a duplicate, other bytes under the same id flag the whole
    /// file (a conflict on any subscriber leaves it untouched for a person).
    private func plan(
        _ name: FileName, file: FileDescriptor, readAs: FileStatus?, record: Record, for subscribers: [Subscriber],
        unsettled: inout [EntryName: [UInt8]], lookup: inout EntryLookup, into report: inout IntakeReport
    ) throws(SpoolError) -> Accepted? {
        var entries: [EntryName] = []
        var duplicates: [(EntryName, SpoolState)] = []
        for subscriber in subscribers {
            let entry = EntryName(key: DeliveryKey(id: record.id), subscriber: subscriber.name)
            guard let existing = try existing(entry, unsettled: unsettled, lookup: &lookup)
            else {
                entries.append(entry)
                continue
            }
            guard
                existing.bytes == record.bytes || Self.isSameWorkout(record.bytes, withRouteIn: existing.bytes, record)
            else {
                try flag(
                    name,
                    reason: "id \(record.id) is already used by \(existing.place) with a different body; "
                        + "give the record a new id, or use `courier copy` for a deliberate duplicate",
                    readAs: readAs, report: &report)
                return nil
            }
            duplicates.append((entry, existing.state ?? .queued))
        }
        for entry in entries { unsettled[entry] = record.bytes }
        return Accepted(
            name: name, file: file, readAs: readAs, record: record,
            target: record.awaitRoute ? .awaitingRoute : .queued,
            entries: entries, duplicates: duplicates, ownUser: ownUser)
    }

    /// An entry of the same name, in this round's earlier files or in any
    /// state folder (another worker's claims too, on a shared spool); one
    /// that cannot be read counts as different bytes.
    private func existing(
        _ entry: EntryName, unsettled: [EntryName: [UInt8]], lookup: inout EntryLookup
    ) throws(SpoolError) -> (bytes: [UInt8], place: String, state: SpoolState?)? {
        if let earlier = unsettled[entry] { return (earlier, "an earlier file of this round", nil) }
        guard let (state, folder) = try lookup.find(entry.fileName, in: spool, unsettled: unsettled.keys) else {
            return nil
        }
        let place = folder.displayPath(of: entry.fileName)
        switch try spool.readChecked(entry.fileName, in: folder, limit: settings.maxRecordSize) {
        case .read(let stored): return (stored, place, state)
        case .refused, .vanished: return ([], place, state)
        }
    }

    /// Flags a dropped file (`Transition.flag`) and counts it. `readAs`:
    /// the file as read, when the reason is in its bytes (a conflict, a kind
    /// nobody takes): a file renamed over the name or written into since is
    /// not what was judged, and is left for the next intake. It is looked at
    /// before the ledger line as well as at the move, so that the line
    /// names the file read (the file may have been read ahead, a whole
    /// commit earlier).
    private func flag(_ name: FileName, reason: String, readAs: FileStatus? = nil, report: inout IntakeReport)
        throws(SpoolError)
    {
        let expected = readAs.map { Transition.Expectation.unwritten($0) }
        if let expected {
            let holds: Bool
            do { holds = expected.holds(now: try spool.directory(.queued).status(of: name)) } catch {
                throw SpoolError(error)
            }
            guard holds else { return }
        }
        let now = Timestamp.now()
        let safe = try FlaggedName.make(for: name, at: now, in: spool.directory(.needsAttention))
        let flagging = Transition.flag(
            name, from: .state(.queued), as: safe, reason: reason, actor: .round(round), at: now, expected: expected)
        guard try session.commit(flagging).vanished.isEmpty else { return }
        report.invalid += 1
        report.flagged.append(safe.description)
    }

    /// A workout that waited for its route is stored with `data.route`
    /// merged in; dropped again as it first was, it is a repeat, while a
    /// corrected one (other bytes) is not.
    static func isSameWorkout(_ dropped: [UInt8], withRouteIn stored: [UInt8], _ record: Record) -> Bool {
        guard record.awaitRoute, let data = JSONSplice.value(of: "data", in: stored),
            let inner = JSONSplice.object(at: 0, in: data),
            let route = inner.members.last(where: { $0.name == Array("route".utf8) })
        else { return false }
        return JSONSplice.settingRoute(Array(data[route.value]), in: dropped) == stored
    }

    /// A route record is never sent on its own: it waits in awaitingRoute/
    /// for the routes step to merge it into its workout.
    private func keepRoute(
        _ record: Record, for workout: RecordID, from name: FileName, readAs: FileStatus?,
        report: inout IntakeReport
    ) throws(SpoolError) {
        // The dropped file goes only as read: a file renamed over its name
        // or written into since is another record, for the next intake.
        let dropped = readAs.map { Transition.Expectation.unwritten($0) }
        let routeName = RouteFile.name(for: workout)
        // A waiting route is never replaced: the same bytes again are a
        // repeat, other bytes need a person (neither route is lost).
        switch try spool.readChecked(routeName, in: .awaitingRoute, limit: settings.maxRecordSize) {
        case .vanished: break
        case .read(let earlier) where earlier == record.bytes:
            try session.commit(
                Transition(
                    lines: [
                        LedgerLine(
                            time: .now(), actor: .round(round), subscriber: nil, key: record.id.value,
                            event: .duplicate,
                            detail: "same route already in awaitingRoute/\(routeName); "
                                + "\(FlaggedName.printable(name)) removed")
                    ], removals: [.init(name, in: .state(.queued), expected: dropped)]))
            report.duplicates += 1
            return
        case .read, .refused:
            try flag(
                name, reason: "a different route for \(workout) is already waiting in awaitingRoute/\(routeName)",
                readAs: readAs, report: &report)
            return
        }
        // Merged already: its dropped name outlived the route's own file (a
        // crash between keeping the route and removing the drop, then a
        // round that merged it). The same route again is a repeat.
        if let merged = try RouteFile.entry(of: workout, withRoute: record.bytes, in: spool, settings.routes) {
            try session.commit(
                Transition(
                    lines: [
                        LedgerLine(
                            time: .now(), actor: .round(round), subscriber: nil, key: record.id.value,
                            event: .duplicate,
                            detail: "same route already merged into \(merged); \(FlaggedName.printable(name)) removed")
                    ], removals: [.init(name, in: .state(.queued), expected: dropped)]))
            report.duplicates += 1
            return
        }
        // The route is durable under its new name before its dropped name goes.
        try session.commit(
            Transition(
                lines: [
                    LedgerLine(
                        time: .now(), actor: .round(round), subscriber: nil, key: record.id.value,
                        event: .awaitingRoute,
                        detail: "route for \(workout) from \(FlaggedName.printable(name))")
                ], removals: [.init(name, in: .state(.queued), expected: dropped)],
                newFiles: [.init(record.bytes, as: routeName, in: .state(.awaitingRoute), replacing: false)]))
        report.routesKept += 1
    }
}
