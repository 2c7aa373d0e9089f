import CourierPosix
import CourierSpool
import Glibc

/// `.courier/sync-requested`: a sync the server (or anyone on the host)
/// asked for by creating the file — the Linux counterpart of a silent push.
/// `courier-sync-request.path` notices it and runs
/// `courier catalog sync --if-requested`, which takes the request, syncs,
/// and then removes it.
///
/// The request is taken by renaming it to `sync-requested.taken` before the
/// sync starts, so one made while the sync runs is a new file that starts
/// the next sync instead of being removed unserved; a taken request that a
/// crash left behind is served by the next run.
package struct SyncRequest {
    let session: SpoolSession

    package static let fileName = FileName("sync-requested")
    static let takenName = FileName("sync-requested.taken")

    package init(session: SpoolSession) {
        self.session = session
    }

    /// True when a sync was asked for: a new request (now taken) or one a
    /// crash left taken. A new request replaces one left taken: both ask
    /// for the same thing.
    package func take() throws(SpoolError) -> Bool {
        let control = session.spool.control
        func exists(_ name: FileName) throws(SpoolError) -> Bool {
            do { return try control.status(of: name) != nil } catch { throw SpoolError(error) }
        }
        if try exists(Self.fileName) {
            try session.commit(
                Transition(moves: [
                    .init(Self.fileName, from: .control, to: .control, as: Self.takenName, replacing: true)
                ]))
        }
        return try exists(Self.takenName)
    }

    /// The sync has run (well or not: its result is in the ledger and the
    /// catalog's state, and a failed one is retried by the timer).
    /// A request made with `mkdir` is removed too: left taken, it would
    /// block every later request from being taken.
    package func finish() throws(SpoolError) {
        try session.commit(Transition(removals: [.init(Self.takenName, in: .control, orEmptyDirectory: true)]))
    }
}
