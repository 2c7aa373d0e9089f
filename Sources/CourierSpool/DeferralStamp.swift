import CourierPosix

/// When a deferred entry is due and how many times it has been deferred,
/// both kept in the entry's modification time (docs/design.md §3,
/// "Retries across rounds"). The whole seconds are the next attempt, as in
/// Postfix's deferred queue, so `ls -l` shows it; the nanoseconds count
/// the deferrals. The count then travels with the file through every
/// rename (a crash's recovery, a person's `mv`) and a round needs neither a
/// ledger read nor a file of its own to know it. A `touch` by a person
/// leaves nanoseconds that are no count, which starts the schedule again.
package struct DeferralStamp: Sendable, Equatable {
    /// The next attempt, in whole seconds.
    package let due: Timestamp
    /// How many times the entry has been deferred, 1 ... `limit`.
    package let deferrals: Int

    /// The most steps a `retry-schedule` may have: a count above it is a
    /// time someone else set, not one of courier's stamps.
    package static let limit = 20

    /// Due at `due` rounded up to the second: never earlier than asked.
    package init(due: Timestamp, deferrals: Int) {
        let seconds = due.secondsSinceEpoch + (due.nanosecondOfSecond > 0 ? 1 : 0)
        self.due = Timestamp(secondsSinceEpoch: seconds)
        self.deferrals = min(max(deferrals, 1), Self.limit)
    }

    /// The stamp a modification time holds, if it is one.
    package init?(modified: Timestamp) {
        let count = modified.nanosecondOfSecond
        guard (1...Int64(Self.limit)).contains(count) else { return nil }
        due = Timestamp(secondsSinceEpoch: modified.secondsSinceEpoch)
        deferrals = Int(count)
    }

    /// The modification time that holds this stamp.
    package var modified: Timestamp {
        Timestamp(secondsSinceEpoch: due.secondsSinceEpoch, nanoseconds: Int64(deferrals))
    }

    /// The time an entry keeps once it is no longer deferred (sent, or
    /// needing attention): the same second without the count, so that a
    /// later resend or backfill starts the schedule from the beginning.
    package static func cleared(_ modified: Timestamp) -> Timestamp {
        Timestamp(secondsSinceEpoch: modified.secondsSinceEpoch)
    }
}
