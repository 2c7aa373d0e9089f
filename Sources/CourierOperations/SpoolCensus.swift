import CourierIdentifiers
import CourierPosix
import CourierSpool

/// One pass over the state folders for the metrics file: how many items
/// each subscriber has in each state, the oldest one's intake time in each
/// state but `sent/`, and each subscriber's deferred entries. One listing
/// per folder and one `lstat` per item outside `sent/` (where age is only
/// history), as the old per-state figures cost.
struct SpoolCensus {
    struct Key: Hashable {
        /// `-` for intake files and flagged files, which are no entry yet.
        let subscriber: String
        let state: SpoolState
    }

    var counts: [Key: Int] = [:]
    var oldestIntake: [Key: Timestamp] = [:]
    /// Of the subscribers with a `retry-schedule`: the rest keep no stamps.
    var deferred: [String: DeferredEntries] = [:]

    static func take(_ spool: Spool, scheduled: Set<SubscriberName>, now: Timestamp) throws(SpoolError)
        -> SpoolCensus
    {
        var census = SpoolCensus()
        let intake = IntakeTimes(spool: spool)
        for state in SpoolState.allCases {
            do {
                try census.visit(spool, state: state, scheduled: scheduled, intake: intake, now: now)
            } catch {
                throw SpoolError(error)
            }
        }
        return census
    }

    private mutating func visit(
        _ spool: Spool, state: SpoolState, scheduled: Set<SubscriberName>, intake times: IntakeTimes, now: Timestamp
    ) throws(SystemError) {
        // sending/ holds every worker's claims on a shared spool, each in
        // its own sending/WORKER/.
        let root = state == .sending ? spool.sendingRoot : spool.directory(state)
        var folders = [root]
        var index = 0
        while index < folders.count {
            let folder = folders[index]
            index += 1
            let stream = try folder.entries()
            while let name = try stream.next() {
                let entry = EntryName(fileName: name)
                if state == .sending, entry == nil, folder === root {
                    if let claims = try? folder.openDirectory(name) { folders.append(claims) }
                    continue
                }
                let key = Key(subscriber: entry?.subscriber.value ?? "-", state: state)
                counts[key, default: 0] += 1
                guard state != .sent, let status = try folder.status(of: name), status.kind == .regular else {
                    continue
                }
                let intake = times.of(SpoolItem(name: name, state: state, entry: entry), status)
                if oldestIntake[key].map({ intake < $0 }) ?? true { oldestIntake[key] = intake }
                if state == .queued, let entry, scheduled.contains(entry.subscriber),
                    let stamp = DeferralStamp(modified: status.modified)
                {
                    deferred[entry.subscriber.value, default: DeferredEntries()].add(stamp, now: now)
                }
            }
        }
    }
}
