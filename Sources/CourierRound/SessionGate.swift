import Glibc

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
/// A pthread mutex rather than `Synchronization.Mutex`, for the reason
/// `Locked` gives: ThreadSanitizer does not see the futex under `Mutex` on
/// Linux, and reported every use of the session on the two threads as a
/// race (15 reports in the fault sweeps). Not `Locked<Void>` either: with
/// no value to guard, ThreadSanitizer reported its empty `inout` access.
final class SessionGate: @unchecked Sendable {
    // `@unchecked Sendable`: the mutex is made before any thread uses the
    // gate and destroyed after the last; pthread_mutex_* may be called from
    // any thread.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the gate, waiting for it if a commit has it.
    func hold<E: Error>(_ body: () throws(E) -> Void) throws(E) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        try body()
    }

    /// Runs `body` holding the gate if nobody holds it now; false when
    /// it did not run.
    func holdIfFree<E: Error>(_ body: () throws(E) -> Void) throws(E) -> Bool {
        guard pthread_mutex_trylock(mutex) == 0 else { return false }
        defer { pthread_mutex_unlock(mutex) }
        try body()
        return true
    }
}
