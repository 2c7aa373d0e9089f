import Testing

@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// How far a group behind a commit may grow: three groups' dropped files
/// are open at once, within the open-file limit.
@Suite struct IntakeGroupSizeTests {
    @Test("a group behind a commit grows to 1,024 files where the open-file limit allows, and never below 256")
    func itsSizeFollowsTheOpenFileLimit() {
        #expect(Intake.groupSizeBehindCommit(openFileLimit: nil) == 1024)
        #expect(Intake.groupSizeBehindCommit(openFileLimit: 524_288) == 1024)
        #expect(Intake.groupSizeBehindCommit(openFileLimit: 2048) == 597)
        #expect(Intake.groupSizeBehindCommit(openFileLimit: 1024) == 256)
        #expect(Intake.groupSizeBehindCommit(openFileLimit: 300) == 256)
    }

    @Test("a group behind a commit leaves a file for each connection the subscribers' concurrency allows")
    func itsSizeLeavesRoomForTheConnections() throws {
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: 256),
            TemporarySpool.subscriber("beta", url: "http://127.0.0.1:9/", concurrency: 256),
            TemporarySpool.subscriber("gamma", url: "http://127.0.0.1:9/", concurrency: 256),
        ])
        let settings = IntakeSettings(spool.configuration)
        #expect(settings.connections == 768)
        // 1,500: groups of 256 kept such a round at 1,300 files or so;
        // groups of 414 ran it out of files.
        #expect(Intake.groupSizeBehindCommit(openFileLimit: 1500, connections: settings.connections) == 256)
        #expect(Intake.groupSizeBehindCommit(openFileLimit: 2048, connections: settings.connections) == 341)
        #expect(Intake.groupSizeBehindCommit(openFileLimit: 524_288, connections: settings.connections) == 1024)
        let intake = Intake(session: spool.session, settings: settings, round: RoundID.make(at: .now()))
        let expected = Intake.groupSizeBehindCommit(openFileLimit: OpenFileLimit.current, connections: 768)
        #expect(intake.groupSizeBehindCommit == expected)
    }

    @Test("on a file system where syncfs does nothing, a group behind a commit stays at 256 files")
    func itDoesNotGrowWhereEachFileIsSyncedAlone() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        spool.spool.syncfsReachesDisk = false
        let intake = Intake(
            session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now()))
        #expect(intake.groupSizeBehindCommit == Intake.groupSize)
    }
}
