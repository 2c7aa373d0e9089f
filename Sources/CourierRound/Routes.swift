import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierRecords
import CourierSpool

/// A route record waiting for its workout: `awaitingRoute/ID.route.json`,
/// ID the workout's id. The name has no `@`, so it is never taken for an
/// entry and never sent on its own.
enum RouteFile {
    static let suffix = ".route.json"

    static func name(for workout: RecordID) -> FileName { FileName(workout.value + suffix) }

    static func workout(of name: FileName) -> RecordID? {
        guard let text = name.string, text.hasSuffix(suffix) else { return nil }
        return RecordID(String(text.dropLast(suffix.count)))
    }

    /// Where an entry of `workout` is that has the route record `route`
    /// merged as its `data.route` (what the routes step splices in: the
    /// route's `data`, or the whole record), if one is: one status and read
    /// per configured subscriber, only for a route nothing waits for.
    static func entry(
        of workout: RecordID, withRoute route: [UInt8], in spool: Spool, _ lookup: RouteSettings.Lookup
    ) throws(SpoolError) -> String? {
        let spliced = JSONSplice.value(of: "data", in: route) ?? route
        for subscriber in lookup.subscribers {
            let entry = EntryName(key: DeliveryKey(id: workout), subscriber: subscriber)
            guard let (_, folder) = try spool.find(entry.fileName),
                case .read(let stored) = try spool.readChecked(
                    entry.fileName, in: folder, limit: lookup.maxRecordSize),
                let data = JSONSplice.value(of: "data", in: stored), let inner = JSONSplice.object(at: 0, in: data),
                let merged = inner.members.last(where: { $0.name == Array("route".utf8) }),
                Array(data[merged.value]) == spliced
            else { continue }
            return folder.displayPath(of: entry.fileName)
        }
        return nil
    }
}

/// What the routes step of a round did.
struct RouteReport {
    var attached: [EntryName] = []
    var timedOut: [String] = []
    /// Workouts the route could not be merged into (they need attention).
    var failed: [String] = []
}

/// The routes step of a round: merges each waiting route into its
/// workout's entries as `data.route` and moves them to `queued/`; moves
/// workouts (and routes) that waited longer than `route-wait` to
/// `needsAttention/`.
struct RouteStep {
    let session: SpoolSession
    let settings: RouteSettings
    let round: RoundID
    let now: Timestamp

    private var spool: Spool { session.spool }

    func run() throws(SpoolError) -> RouteReport {
        var report = RouteReport()
        let waiting: [FileName]
        do { waiting = try spool.directory(.awaitingRoute).sortedNames() } catch {
            throw SpoolError(error)
        }
        var routes: [RecordID: FileName] = [:]
        var workouts: [RecordID: [EntryName]] = [:]
        for name in waiting {
            if let id = RouteFile.workout(of: name) {
                routes[id] = name
            } else if let entry = EntryName(fileName: name) {
                workouts[entry.key.id, default: []].append(entry)
            }
        }
        guard !routes.isEmpty || !workouts.isEmpty else { return report }
        // A workout a person resent to queued/ after its route timed out
        // still takes a route that arrives late.
        let resent = try resentWorkouts(for: Set(routes.keys).subtracting(workouts.keys))

        for (id, routeName) in routes.sorted(by: { $0.key < $1.key }) {
            let targets =
                (workouts[id] ?? []).map { ($0, SpoolState.awaitingRoute) } + (resent[id] ?? []).map { ($0, .queued) }
            if targets.isEmpty {
                // Merged already: the route's own removal did not outlive a
                // crash (it comes last, once the merged workouts are durable).
                let routeRecord = try spool.read(routeName, in: .awaitingRoute, limit: settings.lookup.maxRecordSize)
                if let merged = try RouteFile.entry(of: id, withRoute: routeRecord, in: spool, settings.lookup) {
                    try session.commit(
                        Transition(
                            lines: [
                                line(
                                    id.value, .duplicate,
                                    "route already merged into \(merged); awaitingRoute/\(routeName) removed")
                            ], removals: [.init(routeName, in: .state(.awaitingRoute))]))
                    continue
                }
                var expired = Transition()
                try expireIfOld(
                    routeName, key: id.value, subscriber: nil, into: &expired, report: &report,
                    reason: "no workout \(id) arrived within route-wait")
                try session.commit(expired)
                continue
            }
            let routeRecord = try spool.read(routeName, in: .awaitingRoute, limit: settings.lookup.maxRecordSize)
            let route = JSONSplice.value(of: "data", in: routeRecord) ?? routeRecord
            // One transition per route: the merged workouts are durable
            // before the route goes (step 6 of the protocol).
            var transition = Transition()
            var allAttached = true
            for (entry, state) in targets {
                allAttached =
                    try attach(route, to: entry, in: state, into: &transition, report: &report) && allAttached
            }
            workouts[id] = nil
            if allAttached {
                transition.removals.append(.init(routeName, in: .state(.awaitingRoute)))
            } else {
                // Kept beside its workout for the person who fixes and resends it.
                transition.moves.append(.init(routeName, from: .state(.awaitingRoute), to: .state(.needsAttention)))
            }
            try session.commit(transition)
        }
        var expired = Transition()
        for entry in workouts.values.joined() {
            try expireIfOld(
                entry.fileName, key: entry.key.description, subscriber: entry.subscriber, into: &expired,
                report: &report, reason: "its GPS route did not arrive within route-wait")
        }
        try session.commit(expired)
        return report
    }

    /// Rewrites the entry atomically with the route merged in, then moves it
    /// to queued/. A crash between the two leaves a merged workout in
    /// awaitingRoute/, which the next round sends on when the route is
    /// dropped again, or times out like any other.
    /// False when the route could not be merged (the workout needs attention).
    private func attach(
        _ route: [UInt8], to entry: EntryName, in state: SpoolState, into transition: inout Transition,
        report: inout RouteReport
    ) throws(SpoolError) -> Bool {
        let workout: [UInt8]
        switch try spool.readChecked(entry.fileName, in: state, limit: settings.lookup.maxRecordSize) {
        case .vanished: return true
        case .refused(let reason):
            setAside(
                entry, from: state, reason: "cannot attach the route: the workout is \(reason)", into: &transition,
                report: &report)
            return false
        case .read(let bytes): workout = bytes
        }
        guard let merged = JSONSplice.settingRoute(route, in: workout) else {
            setAside(
                entry, from: state, reason: "cannot attach the route: the workout's `data` is not an object",
                into: &transition, report: &report)
            return false
        }
        // The workout stays as it was rather than be sent cut or oversized.
        guard merged.count <= settings.lookup.maxRecordSize else {
            setAside(
                entry, from: state,
                reason: "cannot attach the route: the merged workout would be "
                    + RecordProblem.tooLarge(size: merged.count, limit: settings.lookup.maxRecordSize).description
                    .replacingOccurrences(of: "record is ", with: ""),
                into: &transition, report: &report)
            return false
        }
        transition.newFiles.append(.init(merged, as: entry.fileName, in: .state(state), replacing: true))
        transition.lines.append(
            line(entry, .routeAttached, "route merged as data.route; \(state == .queued ? "in" : "to") queued/"))
        if state != .queued { transition.moves.append(.init(entry, from: state, to: .queued)) }
        report.attached.append(entry)
        return true
    }

    private func setAside(
        _ entry: EntryName, from state: SpoolState, reason: String, into transition: inout Transition,
        report: inout RouteReport
    ) {
        transition.lines.append(line(entry, .needsAttention, reason))
        transition.moves.append(.init(entry, from: state, to: .needsAttention))
        report.failed.append(entry.description)
    }

    private func expireIfOld(
        _ name: FileName, key: String, subscriber: SubscriberName?, into transition: inout Transition,
        report: inout RouteReport, reason: String
    )
        throws(SpoolError)
    {
        let status: FileStatus?
        do { status = try spool.directory(.awaitingRoute).status(of: name) } catch {
            throw SpoolError(error)
        }
        guard let status, now - status.modified >= settings.routeWait else { return }
        transition.lines.append(
            LedgerLine(
                time: now, actor: .round(round), subscriber: subscriber, key: key, event: .routeTimeout, detail: reason)
        )
        transition.moves.append(.init(name, from: .state(.awaitingRoute), to: .state(.needsAttention)))
        report.timedOut.append(subscriber.map { "\(key)@\($0)" } ?? name.description)
    }

    /// Entries in queued/ of the given ids that still wait for a route:
    /// `awaitRoute: true` and no `data.route`.
    private func resentWorkouts(for ids: Set<RecordID>) throws(SpoolError) -> [RecordID: [EntryName]] {
        guard !ids.isEmpty else { return [:] }
        var found: [RecordID: [EntryName]] = [:]
        try spool.forEachItem(in: .queued) { item in
            guard let entry = item.entry, entry.key.copy == nil, ids.contains(entry.key.id) else { return }
            found[entry.key.id, default: []].append(entry)
        }
        var waiting: [RecordID: [EntryName]] = [:]
        for (id, entries) in found {
            for entry in entries {
                // One that cannot be read is left for delivery to set aside.
                guard
                    case .read(let bytes) = try spool.readChecked(
                        entry.fileName, in: .queued, limit: settings.lookup.maxRecordSize)
                else { continue }
                let hasRoute =
                    JSONSplice.value(of: "data", in: bytes).flatMap { data in
                        JSONSplice.object(at: 0, in: data)?.members.contains { $0.name == Array("route".utf8) }
                    } ?? false
                let awaits = JSONSplice.value(of: "awaitRoute", in: bytes) == Array("true".utf8)
                if awaits && !hasRoute { waiting[id, default: []].append(entry) }
            }
        }
        return waiting
    }

    private func line(_ entry: EntryName, _ event: LedgerEvent, _ detail: String) -> LedgerLine {
        LedgerLine(
            time: now, actor: .round(round), subscriber: entry.subscriber, key: entry.key.description, event: event,
            detail: detail)
    }

    /// A route's own line: subscriber `-`, key its workout's id.
    private func line(_ key: String, _ event: LedgerEvent, _ detail: String) -> LedgerLine {
        LedgerLine(time: now, actor: .round(round), subscriber: nil, key: key, event: event, detail: detail)
    }
}
