import CourierPosix
import CourierSpool

/// `courier status --ages`: how many items wait, per subscriber and state,
/// in age buckets, as Postfix's qshape shows its queues: where a backlog
/// sits and since when, at a glance. Ages are counted from the file's
/// mtime (for an entry, when intake took it), as `list --older-than` does.
package struct QueueShape: Sendable, Equatable {
    /// A bucket: items younger than `limit`; the last one has none.
    package struct Bucket: Sendable, Equatable {
        /// `<5m` for a table's header.
        package let label: String
        /// `under5m` for JSON.
        package let key: String
        package let limit: Duration?
    }

    /// Five minutes: a round's worth (the timer runs every 5 minutes); an
    /// hour: retries and a short outage; a day: a person should have looked.
    package static let buckets = [
        Bucket(label: "<5m", key: "under5m", limit: .seconds(300)),
        Bucket(label: "<1h", key: "under1h", limit: .seconds(3600)),
        Bucket(label: "<1d", key: "under1d", limit: .seconds(86_400)),
        Bucket(label: "older", key: "older", limit: nil),
    ]

    /// The states shown: every one but `sent/`, whose items wait for nothing.
    package static let states = SpoolState.attentionFirst.filter { $0 != .sent }

    /// One subscriber's items in one state, counted per bucket.
    package struct Row: Sendable, Equatable {
        /// `-` for flagged and intake files.
        package let subscriber: String
        package let state: SpoolState
        /// One count per bucket, in the order of `buckets`.
        package var counts: [Int]

        package var total: Int { counts.reduce(0, +) }
    }

    /// Sorted by subscriber, then state in `states` order; only rows with
    /// items.
    package private(set) var rows: [Row]

    /// Index of the bucket an item of this age falls in; an mtime in the
    /// future (a clock set back) counts as new.
    package static func bucket(for age: Duration) -> Int {
        buckets.firstIndex { bucket in bucket.limit.map { age < $0 } ?? true } ?? buckets.count - 1
    }

    /// Reads the state folders and stats each item; `now` is what ages are
    /// counted back from.
    package static func measure(_ spool: Spool, now: Timestamp) throws(SpoolError) -> QueueShape {
        var counts: [String: [SpoolState: [Int]]] = [:]
        let intake = IntakeTimes(spool: spool)
        for state in states {
            let folder = spool.directory(state)
            try spool.forEachItem(in: state) { item in
                // Gone since the folder was read: a round or a person moved it.
                guard let status = try? folder.status(of: item.name) else { return }
                let bucket = bucket(for: now - intake.of(item, status))
                counts[item.ledgerSubscriber, default: [:]][state, default: [Int](repeating: 0, count: buckets.count)][
                    bucket] += 1
            }
        }
        var rows: [Row] = []
        for subscriber in counts.keys.sorted() {
            for state in states {
                if let row = counts[subscriber]?[state] {
                    rows.append(Row(subscriber: subscriber, state: state, counts: row))
                }
            }
        }
        return QueueShape(rows: rows)
    }
}
