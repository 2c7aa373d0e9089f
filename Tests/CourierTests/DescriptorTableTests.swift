import Testing

@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// A pass grows the descriptor table once, before its commit thread
/// starts, to what it may hold open: three intake groups, its connections,
/// the rest.
@Suite struct DescriptorTableTests {
    @Test("reserving descriptors grows the process's table to the count asked, within the open-file limit")
    func reservingGrowsTheTable() throws {
        let before = try #require(DescriptorTable.size)
        let limit = OpenFileLimit.current ?? Int.max
        // Past what the table holds now, so that a reserve doing nothing fails.
        let asked = min(before * 2, limit)
        try #require(asked > before, "the open-file limit (\(limit)) leaves no room to grow a table of \(before)")
        DescriptorTable.reserve(asked)
        let after = try #require(DescriptorTable.size)
        #expect(after >= asked)
        #expect(after <= max(before, limit.nextPowerOfTwo))
    }

    @Test(
        "what a pass may hold open stays within the open-file limit, even where groups of 256 are more than its third",
        arguments: [700, 1_100, 1_500, 20_000])
    func aPassReservesWithinTheLimit(limit: Int) throws {
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: 16)
        ])
        let intake = Intake(
            session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now()),
            openFileLimit: limit)
        #expect(intake.descriptorsAtMost <= limit)
        #expect(intake.droppedFilesAtMost <= 3 * intake.groupSizeBehindCommit)
        // Room for three whole groups is taken whole.
        if limit >= 3 * intake.groupSizeBehindCommit + 16 + Intake.otherDescriptors {
            #expect(intake.droppedFilesAtMost == 3 * intake.groupSizeBehindCommit)
        } else {
            #expect(intake.descriptorsAtMost == limit)
        }
    }
}

extension Int {
    fileprivate var nextPowerOfTwo: Int {
        var power = 1
        while power < self && power < Int.max / 2 { power *= 2 }
        return power
    }
}
