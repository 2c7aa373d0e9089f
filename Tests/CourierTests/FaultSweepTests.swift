import Testing

@testable import CourierPosix

/// The sweeps' own rule, driven by counts made up here: a miss is an issue
/// only while clean rounds still reach what no faulted run did.
@Suite("FaultSweep")
struct FaultSweepTests {
    /// Counts of `sync` that a clean round returns, one per call, the last
    /// repeated.
    final class Rounds {
        private var syncs: [Int]
        init(_ syncs: [Int]) { self.syncs = syncs }

        func next() -> [FaultPlan.Operation: Int] {
            let seen = syncs.count > 1 ? syncs.removeFirst() : syncs[0]
            return [.sync: seen]
        }
    }

    @Test(
        "an occurrence the clean rounds stopped reaching since they were counted is no issue when no faulted run reaches it"
    )
    func aShiftInTimingIsNoIssue() throws {
        let rounds = Rounds([23, 23, 23, 22])
        let sweep = try FaultSweep(counting: rounds.next)
        #expect(sweep.least[.sync] == 23)
        let reached = try sweep.reach("sync #23 fails", .sync, 23, { 22 }, reached: { $0 >= 23 })
        #expect(reached == nil)
    }

    @Test("an occurrence every clean round still reaches and no faulted run does is an issue")
    func aFaultPlanThatChangesTheRoundIsAnIssue() throws {
        let rounds = Rounds([23])
        let sweep = try FaultSweep(counting: rounds.next)
        withKnownIssue {
            let reached = try sweep.reach("sync #23 fails", .sync, 23, { 22 }, reached: { $0 >= 23 })
            #expect(reached == nil)
        }
    }

    @Test(
        "an occurrence only some clean rounds reached is swept when an attempt reaches it, and no issue when none does")
    func anOccurrenceBeyondTheLeastIsSweptWhenReached() throws {
        let rounds = Rounds([22, 23, 22])
        let sweep = try FaultSweep(counting: rounds.next)
        #expect(Array(sweep.occurrences(of: .sync)) == Array(1...23))
        var attempts = [22, 22, 23]
        let reached = try sweep.reach("sync #23 fails", .sync, 23, { attempts.removeFirst() }, reached: { $0 >= 23 })
        #expect(reached == 23)
        #expect(try sweep.reach("sync #23 fails", .sync, 23, { 22 }, reached: { $0 >= 23 }) == nil)
    }
}
