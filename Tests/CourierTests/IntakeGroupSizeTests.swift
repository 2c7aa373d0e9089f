import Testing

@testable import CourierRound

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
}
