import Foundation
import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// A pass that takes dropped files in keeps a group's worth of them taken
/// in ahead of its requests (`DeliveryFeed.fill`), so that the next group
/// commits while the one before is sent, and its loop does not run dry
/// waiting for the commit.
@Suite struct IntakeAheadOfSendsTests {
    /// A feed whose groups commit here, at once, with room for groups of
    /// 1,024 behind a commit.
    static func feed(_ spool: TemporarySpool) throws -> DeliveryFeed {
        let intake = IntakeSession(
            intake: Intake(
                session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now()),
                openFileLimit: 65536))
        #expect(intake.groupSizeBehindCommit == 1024)
        return try DeliveryFeed(spool: spool.spool, intake: intake)
    }

    /// Reads only while the feed holds nothing, as a pass with one free
    /// slot asks.
    static func fillWhileEmpty(_ feed: DeliveryFeed) throws {
        try feed.fill(while: { feed.count == 0 }, isConfigured: { _ in true }, unconfigured: { _ in })
    }

    @Test("a feed that took a group of dropped files in reads on while fewer than a group behind a commit wait")
    func dropsAreTakenInAGroupAhead() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        for index in 0..<1500 { try spool.dropRecord(id: "r\(index)") }
        let feed = try Self.feed(spool)
        try Self.fillWhileEmpty(feed)
        // Groups of 256 (none is behind a commit here) until 1,024 wait.
        #expect(feed.claimedAhead == 1024)
        #expect(try spool.names(in: .sending).count == 1024)
        #expect(try spool.names(in: .queued).count == 1500 - 1024)
    }

    @Test("a feed of big records takes in no more once a quarter of a group's bytes wait")
    func bigRecordsAreTakenInAsBytesAllow() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let padding = String(repeating: "x", count: 100_000)
        for index in 0..<100 { try spool.dropRecord(id: "b\(index)", extra: #","data":"\#(padding)""#) }
        let size =
            try spool.names(in: .queued).map { name in
                try FileManager.default.attributesOfItem(atPath: spool.path + "/queued/" + name)[.size] as? Int ?? 0
            }.max() ?? 0
        let feed = try Self.feed(spool)
        try Self.fillWhileEmpty(feed)
        // One group, full at 4 MiB: more than a quarter of its bytes wait.
        let group = (Intake.groupBytes + size - 1) / size
        #expect(feed.claimedAhead == group)
        #expect(try spool.names(in: .queued).count == 100 - group)
    }

    @Test("a feed with no dropped files reads queued/ only as far as free slots need")
    func entriesAreReadOnlyAsSlotsNeed() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        for index in 0..<50 {
            try spool.spool.deliverNewFile(Array("{}".utf8), named: FileName("q\(index)@alpha.json"), into: .queued)
        }
        let feed = try Self.feed(spool)
        try Self.fillWhileEmpty(feed)
        #expect(feed.count == 1)
        #expect(feed.claimedAhead == 0)
    }
}
