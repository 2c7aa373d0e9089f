import Synchronization

/// One user of a round's `SpoolSession` at a time. The session is one
/// process's way of changing the spool and is not made for two threads:
/// its open folders, the folders claims left unsynced, the serial lock's
/// hold, the ledger's day buffer and the fault plan are plain state. With
/// the group commit on a thread of its own (`CommitThread`), that thread
/// holds the gate through each `SpoolSession.commit`, and the delivery
/// loop holds it for everything it does with the session (intake, claims,
/// tokens, the progress file); between those the loop starts and collects
/// requests while a commit runs. Holding it through intake also keeps the
/// duplicate check exact: no move out of `sending/` happens while intake
/// looks for a name in the state folders.
final class SessionGate: Sendable {
    private let mutex = Mutex(())

    /// Runs `body` holding the gate, waiting for it if a commit has it.
    func hold<E: Error>(_ body: () throws(E) -> Void) throws(E) {
        try mutex.withLock { _ throws(E) in try body() }
    }

    /// Runs `body` holding the gate if nobody holds it now; false when
    /// it did not run.
    func holdIfFree<E: Error>(_ body: () throws(E) -> Void) throws(E) -> Bool {
        let ran: Bool? = try mutex.withLockIfAvailable { _ throws(E) -> Bool in
            try body()
            return true
        }
        return ran ?? false
    }
}
