import CourierIdentifiers
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// Intake's duplicate check by a listing of the state folders: taken when
/// lookups would cost more, under the serial lock, and dropped when a
/// command held that lock since; exact either way.
@Suite struct EntryLookupTests {
    static func entry(_ id: String) -> FileName { FileName("\(id)@alpha.json") }

    static func record(_ id: String) -> [UInt8] { Array(#"{"id":"\#(id)","kind":"sleep"}"#.utf8) }

    /// Looks up absent names under one hold of the serial lock until the
    /// lookup lists the folders; returns how many it took.
    static func lookUntilListing(_ lookup: inout EntryLookup, _ spool: TemporarySpool) throws -> Int {
        for attempt in 1...10_000 {
            #expect(try lookup.find(entry("absent-\(attempt)"), in: spool.spool, unsettled: [:].keys) == nil)
            if lookup.isListing { return attempt }
        }
        throw TestFailure("no listing after 10,000 lookups")
    }

    /// A lookup that has listed the folders under one hold of the round's
    /// serial lock, and left it.
    static func listed(_ spool: TemporarySpool) throws -> EntryLookup {
        var lookup = EntryLookup()
        let lock = try spool.session.serialLock()
        lookup.locked(lock)
        _ = try lookUntilListing(&lookup, spool)
        lookup.unlocked()
        return lookup
    }

    @Test("after lookups worth a listing, the state folders are listed once, and names are answered from it exactly")
    func listsWhenListingIsCheaper() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        for index in 0..<40 {
            try spool.spool.deliverNewFile(Self.record("s\(index)"), named: Self.entry("s\(index)"), into: .sent)
        }
        try spool.spool.deliverNewFile(Self.record("f"), named: Self.entry("f"), into: .failed)
        var lookup = EntryLookup()
        let lock = try spool.session.serialLock()
        lookup.locked(lock)
        let lookups = try Self.lookUntilListing(&lookup, spool)
        // Small folders: a few lookups pay for listing them.
        #expect(lookups < 100, "\(lookups) lookups before listing")
        #expect(try lookup.find(Self.entry("s7"), in: spool.spool, unsettled: [:].keys)?.state == .sent)
        #expect(try lookup.find(Self.entry("f"), in: spool.spool, unsettled: [:].keys)?.state == .failed)
        #expect(try lookup.find(Self.entry("never"), in: spool.spool, unsettled: [:].keys) == nil)
        // A name the round makes is added, and found.
        try spool.spool.deliverNewFile(Self.record("new"), named: Self.entry("new"), into: .sending)
        lookup.made(Self.entry("new"))
        #expect(try lookup.find(Self.entry("new"), in: spool.spool, unsettled: [:].keys)?.state == .sending)
        withExtendedLifetime(lock) {}
    }

    @Test("a name a command makes between two intake groups is found: its commit held the serial lock")
    func aCommandBetweenGroupsDropsTheListing() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        var lookup = try Self.listed(spool)
        // A group with nobody between keeps its listing.
        do {
            let lock = try spool.session.serialLock()
            lookup.locked(lock)
            #expect(lookup.isListing)
            lookup.unlocked()
        }
        // A command (no round lock) makes an entry: its commit takes the lock.
        let command = try SpoolSession(path: spool.path, worker: nil)
        try command.commit(
            Transition(newFiles: [
                .init(Self.record("late"), as: Self.entry("late"), in: .state(.queued), replacing: false)
            ]))
        let lock = try spool.session.serialLock()
        lookup.locked(lock)
        #expect(!lookup.isListing, "the listing outlived a command's commit")
        #expect(try lookup.find(Self.entry("late"), in: spool.spool, unsettled: [:].keys)?.state == .queued)
        withExtendedLifetime(lock) {}
    }

    /// A round's own commit between two groups, as the delivery pass makes
    /// one: it moves a name, so it holds the serial lock too.
    static func roundCommit(_ spool: TemporarySpool, _ id: String) throws {
        try spool.session.commit(
            Transition(newFiles: [.init(record(id), as: entry(id), in: .state(.sent), replacing: false)]))
    }

    @Test("the round's own commits between intake groups keep its listing")
    func ownCommitsKeepTheListing() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        var lookup = try Self.listed(spool)
        let before = SharedCommitLockTests.serialCount(spool)
        try Self.roundCommit(spool, "own")
        #expect(SharedCommitLockTests.serialCount(spool) == before + 1, "the round's commit did not hold the lock")
        let lock = try spool.session.serialLock()
        lookup.locked(lock)
        #expect(lookup.isListing, "the round's own commit dropped its listing")
        withExtendedLifetime(lock) {}
    }

    @Test("a command's commit is noticed even when the round's own commit took the lock after it")
    func aCommandBeforeTheRoundsCommitDropsTheListing() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        var lookup = try Self.listed(spool)
        let command = try SpoolSession(path: spool.path, worker: nil)
        try command.commit(
            Transition(newFiles: [
                .init(Self.record("late"), as: Self.entry("late"), in: .state(.queued), replacing: false)
            ]))
        try Self.roundCommit(spool, "own")
        let lock = try spool.session.serialLock()
        lookup.locked(lock)
        #expect(!lookup.isListing, "the listing outlived a command's commit")
        #expect(try lookup.find(Self.entry("late"), in: spool.spool, unsettled: [:].keys)?.state == .queued)
        withExtendedLifetime(lock) {}
    }

    @Test("a commit of a command that makes or moves a name holds the serial lock; one that only writes lines does not")
    func commandsCountInTheSerialLock() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        func count() throws -> UInt64 { try spool.spool.serialLock().found }
        let command = try SpoolSession(path: spool.path, worker: nil)
        let before = try count()
        try command.commit(
            Transition(newFiles: [.init(Self.record("m"), as: Self.entry("m"), in: .state(.queued), replacing: false)]))
        #expect(try count() == before + 2, "the new entry's commit did not take the serial lock")
        let moved = try #require(EntryName(fileName: Self.entry("m")))
        try command.commit(Transition(moves: [.init(moved, from: .queued, to: .failed)]))
        #expect(try count() == before + 4, "the move's commit did not take the serial lock")
        try command.commit(
            Transition(lines: [
                LedgerLine(time: .now(), round: "-", subscriber: "alpha", key: "m", event: .acknowledged)
            ]))
        #expect(try count() == before + 5, "a line alone took the serial lock")
    }

    @Test(
        "a command's commit is noticed when serial.lock was removed before it and its count started again at the one the round left"
    )
    func aReplacedSerialLockDropsTheListing() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        var lookup = EntryLookup()
        let left: UInt64
        do {
            let lock = try spool.session.serialLock()
            lookup.locked(lock)
            _ = try Self.lookUntilListing(&lookup, spool)
            left = lock.left
            lookup.unlocked()
        }
        // A person removes the lock file (or truncates it) between groups;
        // the commands after it count from nothing again, up to the count
        // the round left.
        let lockPath = spool.path + "/.courier/" + Spool.serialLockName.description
        try FileManager.default.removeItem(atPath: lockPath)
        let command = try SpoolSession(path: spool.path, worker: nil)
        for index in 1...left {
            try command.commit(
                Transition(newFiles: [
                    .init(
                        Self.record("late\(index)"), as: Self.entry("late\(index)"), in: .state(.queued),
                        replacing: false)
                ]))
        }
        #expect(SharedCommitLockTests.serialCount(spool) == left)
        let lock = try spool.session.serialLock()
        lookup.locked(lock)
        #expect(!lookup.isListing, "the listing outlived commands' commits under a new serial.lock")
        #expect(try lookup.find(Self.entry("late\(left)"), in: spool.spool, unsettled: [:].keys)?.state == .queued)
        withExtendedLifetime(lock) {}
    }

    @Test("on a shared spool intake never lists: every other worker's commit would drop the listing")
    func sharedSpoolsLookUp() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let worker = try SpoolSession(path: spool.path, worker: WorkerID("w1"))
        var lookup = EntryLookup()
        let lock = try worker.serialLock()
        lookup.locked(lock)
        for index in 0..<500 {
            #expect(try lookup.find(Self.entry("absent-\(index)"), in: worker.spool, unsettled: [:].keys) == nil)
        }
        #expect(!lookup.isListing)
        withExtendedLifetime(lock) {}
    }
}
