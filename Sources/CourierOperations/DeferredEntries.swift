import CourierIdentifiers
import CourierPosix
import CourierSpool

/// What `status` says of the entries `retry-schedule` has put off: how
/// many wait in `queued/`, how many of those are due (the next background
/// round tries them), and the soonest next attempt of the others. A
/// deferred entry is known by its stamp (`DeferralStamp`), so this needs
/// no configuration and no ledger.
package struct DeferredEntries: Sendable, Equatable {
    package var count = 0
    package var due = 0
    /// The soonest next attempt not reached yet.
    package var next: Timestamp?

    package init() {}

    /// Counts one deferred entry.
    package mutating func add(_ stamp: DeferralStamp, now: Timestamp) {
        count += 1
        if stamp.due <= now {
            due += 1
        } else if next.map({ stamp.due < $0 }) ?? true {
            next = stamp.due
        }
    }

    /// `scheduled`: the subscribers with a `retry-schedule`, the only ones
    /// whose stamps a round reads; their entries alone are looked at, so a
    /// spool without schedules costs no `stat` per entry (a million queued
    /// would take seconds). Nil when the configuration cannot be read:
    /// every entry is looked at.
    package static func survey(_ spool: Spool, of scheduled: Set<SubscriberName>?, now: Timestamp = .now())
        throws(SpoolError) -> DeferredEntries
    {
        var found = DeferredEntries()
        if scheduled?.isEmpty == true { return found }
        let queued = spool.directory(.queued)
        do {
            let stream = try queued.entries()
            while let name = try stream.next() {
                guard let entry = EntryName(fileName: name), scheduled?.contains(entry.subscriber) ?? true,
                    let status = try queued.status(of: name),
                    let stamp = DeferralStamp(modified: status.modified)
                else { continue }
                found.add(stamp, now: now)
            }
        } catch {
            throw SpoolError(error)
        }
        return found
    }
}
