import Glibc

/// The seam where tests fail the spool's system calls: the nth rename,
/// write, fsync or removal of a run fails with the given errno, as a full disk, a
/// failing device or a misconfigured mount would make it fail. Production
/// code passes none. One plan belongs to one thread's spool.
package final class FaultPlan {
    package enum Operation: String, CaseIterable, Sendable {
        case rename, write, sync, remove
    }

    package let operation: Operation?
    package let occurrence: Int
    package let error: Errno
    /// The planned write gets half its bytes out before it fails, as a
    /// disk that fills up in the middle of a write does.
    package let tearing: Bool
    /// How many of each operation have been attempted so far.
    package private(set) var counts: [Operation: Int] = [:]
    /// With `powerCutAtSync`: what is not yet durable, undone at the cut.
    package let powerCut: PowerCut?

    /// A plan that only counts: the first run of a fault sweep.
    package convenience init() {
        self.init(failing: nil, at: 0, with: Errno(0))
    }

    package init(failing operation: Operation?, at occurrence: Int, with error: Errno, tearing: Bool = false) {
        self.operation = operation
        self.occurrence = occurrence
        self.error = error
        self.tearing = tearing
        powerCut = nil
    }

    /// A power cut just before the `sync`th sync (`PowerCut`): that sync
    /// fails with EIO after everything not yet durable is undone.
    package init(powerCutAtSync sync: Int) {
        operation = .sync
        occurrence = sync
        error = Errno(EIO)
        tearing = false
        powerCut = PowerCut()
    }

    /// For a tearing plan: counts the operation like `check`, and returns
    /// the error when this is the one to tear (the caller writes half, then
    /// throws it). Nil for every other plan and occurrence.
    package func tear(_ operation: Operation) -> Errno? {
        guard tearing, operation == self.operation else { return nil }
        counts[operation, default: 0] += 1
        return counts[operation] == occurrence ? error : nil
    }

    /// Counts the operation, and fails it when it is the planned one, as
    /// the real call on `path` would have failed.
    package func check(_ operation: Operation, path: String = "") throws(SystemError) {
        if tearing && operation == self.operation { return }  // counted by `tear`
        counts[operation, default: 0] += 1
        if operation == self.operation && counts[operation] == occurrence {
            powerCut?.cut()
            throw SystemError(operation.rawValue, path: path, error)
        }
        // After the cut the machine is off: nothing more happens.
        if powerCut?.happened == true { throw SystemError(operation.rawValue, path: path, error) }
    }
}
