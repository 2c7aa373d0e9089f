import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool
import Glibc

/// Counts of one intake pass.
public struct IntakeReport: Sendable, Equatable {
    public var accepted = 0
    public var invalid = 0
    public var duplicates = 0
    /// Files that did not parse but are younger than `settle`: left for
    /// the next round, since a script may still be writing them.
    public var settling = 0
    /// The safe names the invalid files got in needsAttention/.
    public var flagged: [String] = []
    /// Group commits made: one ledger fsync and one folder fsync each.
    public var groups = 0
}

/// Turns every file a script dropped into `queued/` under any name into
/// one `KEY@SUB.json` entry per subscriber, or flags it.
///
/// Accepted files are committed in groups: the extra copies for a record's
/// second and later subscribers are written and fsynced under `tmp/`, the
/// group's ledger lines are appended with one fsync, then everything is
/// renamed into place and `queued/` is fsynced once. The dropped file itself
/// becomes the first subscriber's entry by a rename: its bytes are the body,
/// so it is never copied. A crash anywhere leaves the dropped file (or its
/// entry) in place, and intake of it again finds identical entries: a
/// duplicate, not a conflict.
package struct Intake {
    let spool: Spool
    let configuration: Configuration
    let ledger: Ledger
    let round: RoundID
    let now: Timestamp

    /// Dropped files committed together: one ledger fsync and one directory
    /// fsync per group. A group holds its records' bytes until it commits,
    /// so it is bounded by bytes too: memory stays flat whatever
    /// `max-record-size` allows.
    static let groupSize = 256
    static let groupBytes = 4 << 20

    /// An accepted record waiting for its group's commit.
    private struct Accepted {
        let name: FileName
        /// The dropped file, open: its data is fsynced before it becomes an
        /// entry (Postfix's pickup does the same before cleanup takes it).
        let file: FileDescriptor
        let record: Record
        let target: SpoolState
        /// New entries; the first takes the dropped file by rename.
        let entries: [EntryName]
        let duplicates: [(EntryName, SpoolState)]
    }

    func run() throws(SpoolError) -> IntakeReport {
        var report = IntakeReport()
        let stream: DirectoryStream
        do { stream = try spool.directory(.queued).entries() } catch {
            throw .operation("list", path: "queued/", error)
        }
        var group: [Accepted] = []
        var groupBytes = 0
        var planned: [EntryName: [UInt8]] = [:]
        while true {
            let name: FileName?
            do { name = try stream.next() } catch { throw .operation("list", path: "queued/", error) }
            guard let name else { break }
            if EntryName(fileName: name) != nil { continue }
            if let accepted = try take(name, planned: &planned, into: &report) {
                group.append(accepted)
                groupBytes += accepted.record.bytes.count
                if group.count >= Self.groupSize || groupBytes >= Self.groupBytes {
                    try commit(group, into: &report)
                    group.removeAll(keepingCapacity: true)
                    planned.removeAll(keepingCapacity: true)
                    groupBytes = 0
                }
            }
        }
        try commit(group, into: &report)
        return report
    }

    /// Validates one dropped file; flags it, leaves it, or returns its plan.
    private func take(_ name: FileName, planned: inout [EntryName: [UInt8]], into report: inout IntakeReport)
        throws(SpoolError)
        -> Accepted?
    {
        let queued = spool.directory(.queued)
        let status: FileStatus?
        do { status = try queued.status(of: name) } catch { throw .operation("look at", path: "queued/\(name)", error) }
        guard let status else { return nil }
        guard status.kind == .regular else {
            try flag(
                name, reason: "not a regular file (\(status.kind.words)); it was not followed or read", report: &report)
            return nil
        }
        let bytes: [UInt8]
        let file: FileDescriptor
        switch spool.openChecked(name, in: .queued, limit: configuration.maxRecordSize) {
        case (.vanished, _): return nil
        case (.refused(let reason), _):
            try flag(name, reason: reason, report: &report)
            return nil
        case (.read(let content), let opened?):
            bytes = content
            file = opened
        case (.read, nil): return nil
        }

        let record: Record
        switch Record.parse(bytes, maximumSize: configuration.maxRecordSize) {
        case .success(let parsed):
            record = parsed
        case .failure(let problem):
            if problem.mayBeIncomplete && now - status.modified < configuration.settle {
                report.settling += 1
                return nil
            }
            try flag(name, reason: problem.description, report: &report)
            return nil
        }

        if let workout = record.routeFor, record.kind == RecordKind.route {
            try keepRoute(record, for: workout, from: name, report: &report)
            return nil
        }

        let subscribers: [Subscriber]
        switch route(record) {
        case .chosen(let chosen): subscribers = chosen
        case .refused(let reason):
            try flag(name, reason: reason, report: &report)
            return nil
        }

        // Plan first: a conflict on any subscriber leaves the whole file
        // untouched for a person to look at.
        var entries: [EntryName] = []
        var duplicates: [(EntryName, SpoolState)] = []
        for subscriber in subscribers {
            let entry = EntryName(key: DeliveryKey(id: record.id), subscriber: subscriber.name)
            var existing: (bytes: [UInt8], place: String, state: SpoolState?)?
            if let earlier = planned[entry] {
                existing = (earlier, "an earlier file of this round", nil)
            } else if let state = try spool.locate(entry.fileName) {
                switch spool.readChecked(entry.fileName, in: state, limit: configuration.maxRecordSize) {
                case .read(let stored): existing = (stored, "\(state.rawValue)/\(entry)", state)
                case .refused, .vanished: existing = ([], "\(state.rawValue)/\(entry)", state)
                }
            }
            guard let existing else {
                entries.append(entry)
                continue
            }
            guard existing.bytes == bytes || Self.isSameWorkout(bytes, withRouteIn: existing.bytes, record) else {
                try flag(
                    name,
                    reason: "id \(record.id) is already used by \(existing.place) with a different body; "
                        + "give the record a new id, or use `courier copy` for a deliberate duplicate",
                    report: &report)
                return nil
            }
            duplicates.append((entry, existing.state ?? .queued))
        }
        for entry in entries { planned[entry] = bytes }
        return Accepted(
            name: name, file: file, record: record, target: record.awaitRoute ? .awaitingRoute : .queued,
            entries: entries,
            duplicates: duplicates)
    }

    /// Makes a group of accepted files durable entries (see the type's comment).
    private func commit(_ group: [Accepted], into report: inout IntakeReport) throws(SpoolError) {
        guard !group.isEmpty else { return }
        report.groups += 1
        let queued = spool.directory(.queued)
        // The dropped bytes reach the disk before any name or line says
        // they are an entry: after a power cut an entry is never empty.
        // One syncfs covers the whole group (the files are on the spool's
        // file system); a group of one takes the cheaper fsync.
        let taken = group.filter { !$0.entries.isEmpty }
        if !taken.isEmpty {
            do {
                try spool.faults?.check(.sync)
                if taken.count == 1 { try taken[0].file.sync() } else { try queued.syncFileSystem() }
            } catch {
                throw .operation("sync", path: "queued/\(taken[0].name)", error)
            }
        }
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
        var lines: [LedgerLine] = []
        for accepted in group {
            let origin = "from \(Self.printable(accepted.name))"
            lines += accepted.entries.map { entry in
                LedgerLine(
                    time: now, round: round.value, subscriber: entry.subscriber.value, key: entry.key.description,
                    event: accepted.record.awaitRoute ? .awaitingRoute : .accepted,
                    detail: "kind=\(accepted.record.kind) \(origin)")
            }
            lines += accepted.duplicates.map { entry, state in
                LedgerLine(
                    time: now, round: round.value, subscriber: entry.subscriber.value, key: entry.key.description,
                    event: .duplicate, detail: "same record already in \(state.rawValue)/; \(origin) removed")
            }
        }
        try ledger.append(lines)
        for (temporary, entry, target) in staged {
            do {
                try spool.faults?.check(.rename)
                try spool.tmp.rename(temporary, to: spool.directory(target), as: entry.fileName)
            } catch {
                throw .rename(from: "tmp/\(temporary)", to: "\(target.rawValue)/\(entry.fileName)", error)
            }
            renamed += 1
        }
        for accepted in group {
            if let first = accepted.entries.first {
                // An entry's modification time is its intake time: route-wait
                // and prune count from it, not from when a script wrote it. A
                // file courier may not touch (read-only, another owner) keeps
                // its own time rather than block the round.
                try? queued.touch(accepted.name)
                try takeDroppedFile(accepted, as: first)
            } else {
                do { try queued.remove(accepted.name) } catch {
                    throw .operation("remove", path: "queued/\(accepted.name)", error)
                }
            }
            report.accepted += accepted.entries.count
            report.duplicates += accepted.duplicates.count
        }
        try spool.sync(group.contains { $0.target == .awaitingRoute } ? [.queued, .awaitingRoute] : [.queued])
    }

    /// The dropped file becomes the first entry by rename. A person who
    /// moved it away meanwhile does not lose the record: its bytes, read and
    /// checked, are written as the entry instead.
    private func takeDroppedFile(_ accepted: Accepted, as entry: EntryName) throws(SpoolError) {
        do {
            try spool.move(accepted.name, from: .queued, to: accepted.target, as: entry.fileName)
        } catch {
            guard case .rename(_, _, let errno) = error, errno == .noSuchFile else { throw error }
            try spool.deliverNewFile(accepted.record.bytes, named: entry.fileName, into: accepted.target)
        }
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
        _ record: Record, for workout: RecordID, from name: FileName, report: inout IntakeReport
    ) throws(SpoolError) {
        let routeName = RouteFile.name(for: workout)
        // A waiting route is never replaced: the same bytes again are a
        // repeat, other bytes need a person (neither route is lost).
        switch spool.readChecked(routeName, in: .awaitingRoute, limit: configuration.maxRecordSize) {
        case .vanished: break
        case .read(let earlier) where earlier == record.bytes:
            do { try spool.directory(.queued).remove(name) } catch {
                throw .operation("remove", path: "queued/\(name)", error)
            }
            report.duplicates += 1
            return
        case .read, .refused:
            try flag(
                name, reason: "a different route for \(workout) is already waiting in awaitingRoute/\(routeName)",
                report: &report)
            return
        }
        try spool.deliverNewFile(record.bytes, named: routeName, into: .awaitingRoute)
        try ledger.append(
            LedgerLine(
                time: now, round: round.value, subscriber: "-", key: record.id.value, event: .awaitingRoute,
                detail: "route for \(workout) from \(Self.printable(name))"))
        do { try spool.directory(.queued).remove(name) } catch {
            throw .operation("remove", path: "queued/\(name)", error)
        }
    }

    /// The record's subscribers: those it names, or every subscriber whose
    /// `kinds` take its kind.
    private enum Routing {
        case chosen([Subscriber])
        case refused(String)
    }

    private func route(_ record: Record) -> Routing {
        if let names = record.subscribers {
            var chosen: [Subscriber] = []
            for name in names {
                guard let subscriber = configuration.subscriber(named: name) else {
                    return .refused("`subscribers` names \(name), which is not configured")
                }
                chosen.append(subscriber)
            }
            return .chosen(chosen)
        }
        let chosen = configuration.subscribers.filter { $0.takes(kind: record.kind) }
        return chosen.isEmpty ? .refused("no subscriber takes kind \(record.kind)") : .chosen(chosen)
    }

    /// Moves an intake file to needsAttention/ unchanged, under a safe name,
    /// with the reason in the ledger first.
    private func flag(_ name: FileName, reason: String, report: inout IntakeReport) throws(SpoolError) {
        let safe = try Self.safeName(for: name, at: now, in: spool.directory(.needsAttention))
        try ledger.append(
            LedgerLine(
                time: now, round: round.value, subscriber: "-", key: safe.description, event: .invalid,
                detail: "\(reason) (dropped as \(Self.printable(name)))"))
        do {
            try spool.move(name, from: .queued, to: .needsAttention, as: safe)
        } catch {
            if case .rename(_, _, let errno) = error, errno == .noSuchFile { return }
            throw error
        }
        try spool.sync([.queued, .needsAttention])
        report.invalid += 1
        report.flagged.append(safe.description)
    }

    /// `invalid-20261130T070000Z-NAME`: NAME with every byte outside
    /// `[A-Za-z0-9._-]` made `_`, so it is one safe path component that
    /// can never parse as an entry. A name that was flagged before keeps
    /// its original part instead of growing.
    static func safeName(for name: FileName, at time: Timestamp, in directory: DirectoryHandle) throws(SpoolError)
        -> FileName
    {
        var original = name.bytes
        let prefix = Array("invalid-".utf8)
        if original.starts(with: prefix), original.count > prefix.count + 17,
            original[prefix.count + 16] == UInt8(ascii: "Z"), original[prefix.count + 17] == UInt8(ascii: "-")
        {
            original.removeFirst(prefix.count + 18)
        }
        let base = "invalid-\(time.compact)-" + safeComponent(FileName(bytes: original))
        var candidate = FileName(base)
        var counter = 2
        do {
            while try directory.contains(candidate) {
                candidate = FileName("\(base)-\(counter)")
                counter += 1
            }
        } catch {
            throw .operation("look up", path: "needsAttention/\(candidate)", error)
        }
        return candidate
    }

    /// The dropped name made safe: bytes outside `[A-Za-z0-9._-]` become `_`.
    package static func safeComponent(_ name: FileName) -> String {
        let cleaned = name.bytes.prefix(120).map { byte -> UInt8 in
            RecordID.isIDByte(byte) && byte != UInt8(ascii: ":") ? byte : UInt8(ascii: "_")
        }
        return String(decoding: cleaned, as: UTF8.self)
    }

    /// A dropped file's name for the ledger: printable, never a tab.
    static func printable(_ name: FileName) -> String {
        String(String(decoding: name.bytes, as: UTF8.self).prefix(100))
    }
}
