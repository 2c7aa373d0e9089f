import Foundation
import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierSpool

/// One process's folder fsync can make another's rename durable half-way
/// (btrfs: a worker's fsync of `sent/`, or a person's `ack`), so every
/// commit that moves names holds the serial lock through its fsyncs, a
/// round's on a single-worker spool too.
@Suite struct SharedCommitLockTests {
    /// How often the lock was taken (0 before its first holder).
    static func serialCount(_ spool: TemporarySpool) -> UInt64 {
        let bytes = FileManager.default.contents(atPath: spool.path + "/.courier/" + Spool.serialLockName.description)
        return (bytes ?? Data()).prefix(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    @Test("a round's commit that moves names takes the serial lock, on a shared spool and on a single-worker one")
    func roundCommitsHoldTheSerialLock() throws {
        let spool = try TemporarySpool()
        for worker in [WorkerID?.none, try WorkerID("w1")] {
            let session = try SpoolSession(spool: try Spool(path: spool.path), worker: worker)
            let round = try #require(try session.spool.lockWorkerRound(wait: false))
            let name = FileName("r-\(worker?.description ?? "solo")@alpha.json")
            try session.commit(
                Transition(newFiles: [.init(Array("{}".utf8), as: name, in: .state(.failed), replacing: false)]))
            let before = Self.serialCount(spool)
            try session.commit(Transition(moves: [.init(name, from: .state(.failed), to: .state(.sent))]))
            let after = Self.serialCount(spool)
            #expect(after != before, "worker \(String(describing: worker)): \(before) → \(after)")
            withExtendedLifetime(round) {}
        }
    }
}
