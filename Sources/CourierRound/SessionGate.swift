import CourierSupport

/// One user of a round's `SpoolSession` at a time. The session is one
/// process's way of changing the spool and is not made for two threads:
/// its open folders, the folders claims left unsynced, the serial lock's
/// hold, the ledger's day buffer and the fault plan are plain state. The
/// commit thread (`CommitThread`) holds the gate through each commit it
/// carries out (a group commit, an intake group's), and the delivery loop
/// holds it for everything it does with the session (reading dropped files
/// with the duplicate check, claims, tokens, the progress file); between
/// those the loop starts and collects requests while a commit runs.
/// Holding it while intake reads also keeps the duplicate check exact:
/// nothing moves in the state folders while intake looks for a name there.
///
/// A `Locked` (a pthread mutex), not `Synchronization.Mutex`, which
/// ThreadSanitizer cannot see on Linux: with it the fault sweeps under
/// `scripts/sanitize.sh thread` reported every use of the session on the
/// two threads as a race (15 reports), and nothing was checked.
final class SessionGate: Sendable {
    private let lock = Locked(())

    /// Runs `body` holding the gate, waiting for it if a commit has it.
    func hold<E: Error>(_ body: () throws(E) -> Void) throws(E) {
        try lock.withLock { _ throws(E) in try body() }
    }

    /// Runs `body` holding the gate if nobody holds it now; false when
    /// it did not run.
    func holdIfFree<E: Error>(_ body: () throws(E) -> Void) throws(E) -> Bool {
        try lock.withLockIfAvailable { _ throws(E) -> Bool in
            try body()
            return true
        } ?? false
    }
}
