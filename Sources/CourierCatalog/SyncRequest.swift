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
public struct SyncRequest {
    let control: DirectoryHandle

    public static let fileName = FileName("sync-requested")
    static let takenName = FileName("sync-requested.taken")

    public init(spool: Spool) {
        self.control = spool.control
    }

    /// True when a sync was asked for: a new request (now taken) or one a
    /// crash left taken.
    public func take() throws(SpoolError) -> Bool {
        do {
            if try control.status(of: Self.fileName) != nil {
                try control.rename(Self.fileName, to: control, as: Self.takenName)
            }
            return try control.status(of: Self.takenName) != nil
        } catch {
            throw SpoolError(error)
        }
    }

    /// The sync has run (well or not: its result is in the ledger and the
    /// catalog's state, and a failed one is retried by the timer).
    /// A request made with `mkdir` is removed too: left taken, it would
    /// block every later request from being taken.
    public func finish() throws(SpoolError) {
        do {
            if try control.status(of: Self.takenName)?.kind == .directory {
                try control.removeDirectory(Self.takenName)
            } else {
                try control.remove(Self.takenName)
            }
        } catch {
            throw SpoolError(error)
        }
    }
}
