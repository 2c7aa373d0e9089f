import CourierPosix
import CourierSpool
import CourierSupport

/// What `courier log` asks of the ledger: which lines, and how many of the
/// last of them.
package struct LogQuery: Sendable {
    package var filter: History.Filter
    /// `-n N`: only the last N matching lines.
    package var last: Int?

    package init(filter: History.Filter, last: Int? = nil) {
        self.filter = filter
        self.last = last
    }

    /// Where the lines start when `--since` is not given: today, 00:00 UTC
    /// (the ledger's own day), since the ledger keeps months and the
    /// question is mostly about now. Not when something else bounds it:
    /// `--until` alone asks for what came before, and `--key` for one
    /// item's whole story, which is a few lines however old. A follow
    /// starts today even with a key: it is about what comes next, and its
    /// first look reads every line of its window, without the key search.
    package static func defaultSince(until: Timestamp?, key: String?, following: Bool = false, now: Timestamp)
        -> Timestamp?
    {
        guard following || (until == nil && key == nil) else { return nil }
        return now.utcDayStart
    }
}

extension History {
    /// The lines `query` matches, oldest first: as they are read, or with
    /// `last`, the last that many once the window is read.
    package func run(_ query: LogQuery, _ visit: (LedgerLine) -> Void) throws(SpoolError) {
        guard let count = query.last else { return try forEachLine(query.filter, visit) }
        var last = LastLines(count)
        try forEachLine(query.filter) { last.append($0) }
        last.lines.forEach(visit)
    }

    /// Whether a ledger line names `subscriber`: one removed from the
    /// configuration keeps its history, which `log --subscriber` still
    /// shows. Newest day first, stopping at the first line.
    package func mentions(subscriber: String) throws(SpoolError) -> Bool {
        let needle = "\t" + LedgerLine.escape(subscriber) + "\t"
        for (_, name) in try Ledger.dayFiles(in: spool.ledgerDirectory).reversed() {
            var found = false
            _ = try Ledger.readDay(name, in: spool.ledgerDirectory, containing: needle) { line in
                if line.subscriber == subscriber { found = true }
            }
            if found { return true }
        }
        return false
    }
}

/// The last `capacity` lines it was given, oldest first: `-n N` keeps no
/// more than N lines in memory however long the window.
package struct LastLines: Sendable {
    package let capacity: Int
    private var ring: [LedgerLine] = []
    private var next = 0

    package init(_ capacity: Int) { self.capacity = max(0, capacity) }

    package mutating func append(_ line: LedgerLine) {
        guard capacity > 0 else { return }
        if ring.count < capacity {
            ring.append(line)
        } else {
            ring[next] = line
            next = (next + 1) % capacity
        }
    }

    package var lines: [LedgerLine] { Array(ring[next...] + ring[..<next]) }
}

/// `courier log --follow`: the matching lines written since it last looked,
/// read whole across day files (a follow that runs past midnight goes on
/// in the new day's files), each worker's file from where it stopped.
package struct LedgerFollower {
    let directory: DirectoryHandle
    let filter: History.Filter
    /// After the last whole line read; nil before the first look with no
    /// `since`, which then reads the whole ledger.
    package private(set) var position: LedgerPosition?

    package init(spool: Spool, filter: History.Filter) {
        directory = spool.ledgerDirectory
        self.filter = filter
        position = filter.since.map { LedgerPosition(day: $0.utcDay) }
    }

    /// Visits the matching lines written since the last look.
    package mutating func poll(_ visit: (LedgerLine) -> Void) throws(SpoolError) {
        let filter = filter
        position = try Ledger.readNew(after: position, in: directory) { line in
            if filter.matches(line) { visit(line) }
        }
    }
}
