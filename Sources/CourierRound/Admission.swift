import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool

/// Which entries of `queued/` a delivery pass takes, and a count of what it
/// leaves there on purpose: every entry of a held subscriber, the untried
/// entries of one the breaker stopped, and, in a background round, the
/// deferred entries that are not due yet (a person's `send-now` takes
/// those too). What it takes may carry a deferral stamp, kept for the
/// settling (`DeferralStamp`).
final class Admission {
    private let queued: DirectoryHandle
    private let mode: RoundMode
    /// Subscribers with a `retry-schedule`: only their entries are looked
    /// at for a stamp, so a round without schedules costs no `stat`.
    private let scheduled: Set<SubscriberName>
    /// Held subscribers, each with how many entries stayed in `queued/`.
    private(set) var held: [SubscriberName: Int] = [:]
    /// Subscribers the breaker stopped, each with how many entries stayed.
    private(set) var stopped: [SubscriberName: Int] = [:]
    /// Deferred entries passed over because they are not due yet.
    private(set) var notDue = 0
    /// `send-now NAME…`: the only entries the pass takes; nil for all.
    var chosen: Set<EntryName>?
    /// Entries passed over because they were not chosen.
    private(set) var notChosen = 0
    private var stamps: [EntryName: DeferralStamp] = [:]
    private let clock: () -> Timestamp

    init(
        spool: Spool, settings: AdmissionSettings, mode: RoundMode, holds: [Hold], schedules: RetrySchedules,
        clock: @escaping () -> Timestamp = Timestamp.now
    ) {
        queued = spool.directory(.queued)
        self.mode = mode
        self.clock = clock
        scheduled = schedules.scheduled
        for hold in holds where settings.subscribers.contains(hold.subscriber) {
            held[hold.subscriber] = 0
        }
    }

    /// Every entry read and left in `queued/` so far.
    var passedOver: Int {
        held.values.reduce(0, +) + stopped.values.reduce(0, +) + notDue + notChosen
    }

    /// Whether the entry is one the pass may send (`send-now NAME…`).
    func isChosen(_ entry: EntryName) -> Bool { chosen?.contains(entry) ?? true }

    /// Whether the pass may still start requests to the subscriber.
    func isOpen(_ subscriber: SubscriberName) -> Bool {
        // Asked several times per record; nearly always nothing is held or
        // stopped, and an empty table answers without hashing the name.
        (held.isEmpty || held[subscriber] == nil) && (stopped.isEmpty || stopped[subscriber] == nil)
    }

    /// True when the pass takes the entry now; otherwise it stays in
    /// `queued/` and is counted.
    func admit(_ entry: EntryName) -> Bool {
        let subscriber = entry.subscriber
        if !held.isEmpty, let count = held[subscriber] {
            held[subscriber] = count + 1
            return false
        }
        if !stopped.isEmpty, let count = stopped[subscriber] {
            stopped[subscriber] = count + 1
            return false
        }
        if let chosen, !chosen.contains(entry) {
            notChosen += 1
            return false
        }
        guard !scheduled.isEmpty, scheduled.contains(subscriber) else { return true }
        // An entry that cannot be looked at is taken: the claim will say
        // what is wrong with it.
        guard let status = try? queued.status(of: entry.fileName),
            let stamp = DeferralStamp(modified: status.modified)
        else { return true }
        if mode == .background && stamp.due > clock() {
            notDue += 1
            return false
        }
        stamps[entry] = stamp
        return true
    }

    /// The stamp an admitted entry had, once.
    func takeStamp(of entry: EntryName) -> DeferralStamp? {
        stamps.isEmpty ? nil : stamps.removeValue(forKey: entry)
    }

    /// The breaker stopped the subscriber: `left` entries read ahead stay
    /// in `queued/`, and so will every later one.
    func stop(_ subscriber: SubscriberName, leaving left: Int) {
        stopped[subscriber, default: 0] += left
    }
}
