import Foundation
import Testing

@testable import CourierOperations
@testable import CourierPosix
@testable import CourierSpool
@testable import CourierSupport

/// `courier log`'s reading of the ledger: the default window, the last N,
/// keys, subscribers the configuration forgot, and following.
@Suite struct LogQueryTests {
    static func time(_ text: String) throws -> Timestamp {
        guard let time = Timestamp(rfc3339: text) else { throw TestFailure("\(text) is not RFC 3339") }
        return time
    }

    /// Lines over three UTC days for subscribers alpha and beta.
    static func ledger() throws -> TemporarySpool {
        let spool = try TemporarySpool()
        var lines: [LedgerLine] = []
        for (day, keys) in [
            ("2026-11-28", ["a1", "a2"]), ("2026-11-29", ["b1", "b1#2"]), ("2026-11-30", ["c1", "c2"]),
        ] {
            for (index, key) in keys.enumerated() {
                lines.append(
                    LedgerLine(
                        time: try time("\(day)T0\(index + 1):00:00Z"), round: "r", subscriber: "alpha", key: key,
                        event: .accepted))
                lines.append(
                    LedgerLine(
                        time: try time("\(day)T0\(index + 1):00:01Z"), round: "r", subscriber: "beta", key: key,
                        event: .sent, status: 201))
            }
        }
        try Ledger(directory: spool.spool.ledgerDirectory).append(lines)
        return spool
    }

    static func keys(_ spool: TemporarySpool, _ query: LogQuery) throws -> [String] {
        var keys: [String] = []
        try History(spool: spool.spool).run(query) { keys.append("\($0.key)@\($0.subscriber)") }
        return keys
    }

    @Test(
        "without --since the window is today in UTC; --until or --key alone read from the ledger's start, but a follow")
    func theDefaultWindowIsToday() throws {
        let now = try Self.time("2026-11-30T07:45:00Z")
        #expect(LogQuery.defaultSince(until: nil, key: nil, now: now)?.rfc3339 == "2026-11-30T00:00:00.000Z")
        #expect(LogQuery.defaultSince(until: now, key: nil, now: now) == nil)
        #expect(LogQuery.defaultSince(until: nil, key: "k", now: now) == nil)
        // A follow is about what comes next: today, even for one key.
        #expect(
            LogQuery.defaultSince(until: nil, key: "k", following: true, now: now)?.rfc3339
                == "2026-11-30T00:00:00.000Z")
        let spool = try Self.ledger()
        let today = History.Filter(since: LogQuery.defaultSince(until: nil, key: nil, now: now))
        #expect(try Self.keys(spool, LogQuery(filter: today)) == ["c1@alpha", "c1@beta", "c2@alpha", "c2@beta"])
    }

    @Test("-n keeps the last N matching lines, within --since and --until too")
    func lastNLines() throws {
        let spool = try Self.ledger()
        #expect(
            try Self.keys(spool, LogQuery(filter: History.Filter(), last: 3)) == ["c1@beta", "c2@alpha", "c2@beta"])
        let window = History.Filter(
            since: try Self.time("2026-11-28T02:00:00Z"), until: try Self.time("2026-11-29T02:00:00Z"),
            subscriber: "alpha")
        #expect(try Self.keys(spool, LogQuery(filter: window)) == ["a2@alpha", "b1@alpha"])
        #expect(try Self.keys(spool, LogQuery(filter: window, last: 1)) == ["b1@alpha"])
        #expect(try Self.keys(spool, LogQuery(filter: window, last: 0)).isEmpty)
        #expect(try Self.keys(spool, LogQuery(filter: window, last: 50)) == ["a2@alpha", "b1@alpha"])
    }

    @Test("--key matches the key column exactly: a copy ID#2 is a key of its own")
    func keysMatchExactly() throws {
        let spool = try Self.ledger()
        #expect(try Self.keys(spool, LogQuery(filter: History.Filter(key: "b1"))) == ["b1@alpha", "b1@beta"])
        #expect(try Self.keys(spool, LogQuery(filter: History.Filter(key: "b1#2"))) == ["b1#2@alpha", "b1#2@beta"])
        #expect(try Self.keys(spool, LogQuery(filter: History.Filter(key: "b"))).isEmpty)
    }

    @Test("a subscriber that is only in the ledger is found there; a name in no column 3 is not")
    func subscribersMentionedInTheLedger() throws {
        let spool = try Self.ledger()
        try Ledger(directory: spool.spool.ledgerDirectory).append(
            LedgerLine(
                time: try Self.time("2026-11-01T00:00:00Z"), round: "gone", subscriber: "old", key: "k", event: .sent))
        let history = History(spool: spool.spool)
        #expect(try history.mentions(subscriber: "old"))
        #expect(try history.mentions(subscriber: "beta"))
        // In the round column, not the subscriber's.
        #expect(try !history.mentions(subscriber: "gone"))
        #expect(try !history.mentions(subscriber: "alpah"))
    }

    @Test("LastLines keeps the last N in order, however many pass")
    func lastLinesIsARing() throws {
        var last = LastLines(3)
        let base = try Self.time("2026-11-30T00:00:00Z")
        for index in 0..<10 {
            last.append(LedgerLine(time: base, round: "r", subscriber: "s", key: "k\(index)", event: .sent))
        }
        #expect(last.lines.map(\.key) == ["k7", "k8", "k9"])
        var none = LastLines(0)
        none.append(LedgerLine(time: base, round: "r", subscriber: "s", key: "k", event: .sent))
        #expect(none.lines.isEmpty)
    }

    @Test("a follower reads the window, then only new whole lines, into the next UTC day's file")
    func followingCrossesTheDayChange() throws {
        let spool = try Self.ledger()
        let since = try Self.time("2026-11-30T00:00:00Z")
        var follower = LedgerFollower(spool: spool.spool, filter: History.Filter(since: since, subscriber: "alpha"))
        var seen: [String] = []
        try follower.poll { seen.append($0.key) }
        #expect(seen == ["c1", "c2"])
        try follower.poll { seen.append($0.key) }
        #expect(seen == ["c1", "c2"])
        let ledger = Ledger(directory: spool.spool.ledgerDirectory)
        try ledger.append([
            LedgerLine(
                time: try Self.time("2026-11-30T23:59:59Z"), round: "r", subscriber: "alpha", key: "late", event: .sent),
            LedgerLine(
                time: try Self.time("2026-12-01T00:00:01Z"), round: "r", subscriber: "alpha", key: "next", event: .sent),
            LedgerLine(
                time: try Self.time("2026-12-01T00:00:02Z"), round: "r", subscriber: "beta", key: "other", event: .sent),
        ])
        // Half a line being written is left for the next look, then read whole.
        let torn = LedgerLine(
            time: try Self.time("2026-12-01T00:00:03Z"), round: "r", subscriber: "alpha", key: "torn", event: .sent
        ).formatted
        let file = try spool.spool.ledgerDirectory.openFile(FileName("2026-12-01.tsv"), flags: O_WRONLY | O_APPEND)
        try file.write(Array(torn.utf8.prefix(20)))
        try follower.poll { seen.append($0.key) }
        #expect(seen == ["c1", "c2", "late", "next"])
        try file.write(Array(torn.utf8.dropFirst(20)))
        try follower.poll { seen.append($0.key) }
        #expect(seen == ["c1", "c2", "late", "next", "torn"])
    }
}
