import CourierIdentifiers
import Foundation
import Testing

@testable import CourierOperations
@testable import CourierPosix
@testable import CourierSpool

/// `courier list`: which items, and the last event of each, read from the
/// newest ledger day back.
@Suite struct ListingTests {
    static let now = Timestamp(secondsSinceEpoch: 1_796_000_000)

    /// An entry file in `state`, modified `age` before `now`.
    static func put(_ name: String, in state: SpoolState, age: Duration, _ spool: TemporarySpool) throws {
        try spool.spool.deliverNewFile(
            Array(#"{"id":"x","kind":"sleep","time":"2026-11-30T07:00:00Z"}"#.utf8), named: FileName(name),
            into: state)
        try spool.spool.directory(state).setModified(FileName(name), to: now - age)
    }

    static func rows(_ spool: TemporarySpool, _ filter: Listing.Filter) throws -> [String] {
        var rows: [String] = []
        try Listing(spool: spool.spool).forEach(filter, now: now) {
            rows.append("\($0.item.state.rawValue)/\($0.item.name)")
        }
        return rows.sorted()
    }

    static func spool() throws -> TemporarySpool {
        let spool = try TemporarySpool()
        try put("q1@alpha.json", in: .queued, age: .seconds(60), spool)
        try put("q2@beta.json", in: .queued, age: .seconds(7200), spool)
        try put("n1@alpha.json", in: .needsAttention, age: .seconds(3 * 86_400), spool)
        try put("f1@beta.json", in: .failed, age: .seconds(600), spool)
        try put("s1@alpha.json", in: .sent, age: .seconds(30), spool)
        try put("invalid-20261130T070000Z-x.json", in: .needsAttention, age: .seconds(30), spool)
        return spool
    }

    @Test("without a state, list shows every state but sent/")
    func everyStateButSent() throws {
        let spool = try Self.spool()
        #expect(
            try Self.rows(spool, Listing.Filter()) == [
                "failed/f1@beta.json", "needsAttention/invalid-20261130T070000Z-x.json", "needsAttention/n1@alpha.json",
                "queued/q1@alpha.json", "queued/q2@beta.json",
            ])
        #expect(try Self.rows(spool, Listing.Filter(states: [.sent])) == ["sent/s1@alpha.json"])
    }

    @Test("--subscriber keeps one subscriber's items; - the flagged files")
    func oneSubscriber() throws {
        let spool = try Self.spool()
        #expect(
            try Self.rows(spool, Listing.Filter(subscriber: "alpha")) == [
                "needsAttention/n1@alpha.json", "queued/q1@alpha.json",
            ])
        #expect(
            try Self.rows(spool, Listing.Filter(subscriber: "-")) == ["needsAttention/invalid-20261130T070000Z-x.json"])
        #expect(try Self.rows(spool, Listing.Filter(subscriber: "gamma")).isEmpty)
    }

    @Test("--older-than keeps items whose file is older than the duration, by mtime")
    func olderThan() throws {
        let spool = try Self.spool()
        #expect(
            try Self.rows(spool, Listing.Filter(olderThan: .seconds(3600))) == [
                "needsAttention/n1@alpha.json", "queued/q2@beta.json",
            ])
        #expect(
            try Self.rows(spool, Listing.Filter(states: [.queued], subscriber: "beta", olderThan: .seconds(300))) == [
                "queued/q2@beta.json"
            ])
    }

    @Test("a row carries the record's kind and time, the file's mtime and the item's last event")
    func rowsSayWhatListShows() throws {
        let spool = try Self.spool()
        try Ledger(directory: spool.spool.ledgerDirectory).append([
            LedgerLine(time: Self.now - .seconds(60), round: "r", subscriber: "alpha", key: "q1", event: .accepted),
            LedgerLine(time: Self.now - .seconds(50), round: "r", subscriber: "alpha", key: "q1", event: .recovered),
        ])
        var rows: [Listing.Row] = []
        try Listing(spool: spool.spool).forEach(Listing.Filter(states: [.queued], subscriber: "alpha"), now: Self.now) {
            rows.append($0)
        }
        let row = try #require(rows.first)
        #expect(rows.count == 1)
        #expect(row.kind == "sleep" && row.time == "2026-11-30T07:00:00Z")
        #expect(row.takenIn == Self.now - .seconds(60))
        #expect(row.last == LastEvent(event: .recovered, status: 0))
    }

    @Test("the last event is the item's newest line: the last of its newest day, however old that day is")
    func lastEventsNewestDayFirst() throws {
        let spool = try TemporarySpool()
        func at(_ text: String) throws -> Timestamp { try #require(Timestamp(rfc3339: text)) }
        try Ledger(directory: spool.spool.ledgerDirectory).append([
            LedgerLine(
                time: try at("2026-11-01T10:00:00Z"), round: "r", subscriber: "alpha", key: "old", event: .accepted),
            LedgerLine(
                time: try at("2026-11-01T10:00:01Z"), round: "r", subscriber: "alpha", key: "old",
                event: .needsAttention,
                status: 503),
            LedgerLine(
                time: try at("2026-11-01T10:00:02Z"), round: "r", subscriber: "alpha", key: "k", event: .accepted),
            LedgerLine(
                time: try at("2026-11-29T10:00:00Z"), round: "r", subscriber: "alpha", key: "k", event: .retry,
                status: 500),
            LedgerLine(
                time: try at("2026-11-29T10:00:05Z"), round: "r", subscriber: "alpha", key: "k", event: .sent,
                status: 201),
            LedgerLine(
                time: try at("2026-11-30T10:00:00Z"), round: "r", subscriber: "beta", key: "k", event: .accepted),
        ])
        // A hand-edited line in the newest file is passed over.
        let file = try spool.spool.ledgerDirectory.openFile(FileName("2026-11-30.tsv"), flags: O_WRONLY | O_APPEND)
        try file.write(Array("2026-11-30T11:00:00Z\tr\talpha\tk\tnonsense\t0\t0\t0\t\nalpha\tk\n".utf8))
        // Read in chunks smaller than a line too: lines across a chunk's end
        // are read whole.
        for chunk in [4 << 20, 100, 80] {
            let events = try LastEvents(directory: spool.spool.ledgerDirectory, chunk: chunk)
            #expect(
                try events.last(subscriber: SubscriberName("alpha"), key: "k") == LastEvent(event: .sent, status: 201),
                "\(chunk)")
            #expect(
                try events.last(subscriber: SubscriberName("beta"), key: "k") == LastEvent(event: .accepted, status: 0),
                "\(chunk)")
            #expect(
                try events.last(subscriber: SubscriberName("alpha"), key: "old")
                    == LastEvent(event: .needsAttention, status: 503),
                "\(chunk)")
            #expect(try events.last(subscriber: SubscriberName("alpha"), key: "never") == nil, "\(chunk)")
            #expect(
                try events.last(subscriber: SubscriberName("alpha"), key: "k") == LastEvent(event: .sent, status: 201),
                "\(chunk)")
        }
    }
}

/// `courier status --ages`: qshape's view of the spool.
@Suite struct QueueShapeTests {
    @Test(
        "an age falls in the first bucket it is under: <5m, <1h, <1d, else older",
        arguments: [
            (0, 0), (-30, 0), (299, 0), (300, 1), (3599, 1), (3600, 2), (86_399, 2), (86_400, 3), (10_000_000, 3),
        ])
    func buckets(seconds: Int64, bucket: Int) {
        #expect(QueueShape.bucket(for: .seconds(seconds)) == bucket, "\(seconds) s")
    }

    @Test("items are counted per subscriber and state by their file's age; sent/ is left out")
    func shapeOfASpool() throws {
        let spool = try ListingTests.spool()
        try ListingTests.put("q3@alpha.json", in: .queued, age: .seconds(2 * 86_400), spool)
        try ListingTests.put("n2@alpha.json", in: .needsAttention, age: .seconds(1), spool)
        let shape = try QueueShape.measure(spool.spool, now: ListingTests.now)
        #expect(
            shape.rows == [
                QueueShape.Row(subscriber: "-", state: .needsAttention, counts: [1, 0, 0, 0]),
                QueueShape.Row(subscriber: "alpha", state: .needsAttention, counts: [1, 0, 0, 1]),
                QueueShape.Row(subscriber: "alpha", state: .queued, counts: [1, 0, 0, 1]),
                QueueShape.Row(subscriber: "beta", state: .queued, counts: [0, 0, 1, 0]),
                QueueShape.Row(subscriber: "beta", state: .failed, counts: [0, 1, 0, 0]),
            ])
        #expect(shape.rows.map(\.total) == [1, 2, 2, 1, 1])
        #expect(try QueueShape.measure(TemporarySpool().spool, now: ListingTests.now).rows.isEmpty)
    }
}
