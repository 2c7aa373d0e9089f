import CourierPosix
import Glibc

extension Spool {
    /// Whether the spool's file system keeps the nanoseconds of a
    /// modification time, where a deferral's count lives (`DeferralStamp`).
    /// Every Linux file system courier is meant for does; one that keeps
    /// whole seconds only would make every deferral look like the first.
    package func keepsDeferralStamps() -> Bool {
        let probe = uniqueTemporaryName(for: FileName("stamp-probe"))
        defer { try? tmp.remove(probe) }
        let stamp = DeferralStamp(due: .now(), deferrals: 7)
        do {
            _ = try tmp.openFile(probe, flags: O_WRONLY | O_CREAT | O_EXCL)
            try tmp.setModified(probe, to: stamp.modified)
            return try tmp.status(of: probe).flatMap { DeferralStamp(modified: $0.modified) } == stamp
        } catch {
            return false
        }
    }
}

extension FileStatus {
    /// When the item in this file was taken in, as far as the file tells:
    /// the earlier of its birth time (rename keeps it, and intake renames
    /// the dropped file) and its modification time, unless that holds a
    /// deferral's stamp: a deferred entry's time is its next attempt, not
    /// its age. Nil when the file system keeps no birth time and the entry
    /// is deferred: its `accepted` ledger line tells then. No call beyond
    /// the one status an item costs anyway.
    package var takenIn: Timestamp? {
        let plainModified = DeferralStamp(modified: modified) == nil ? modified : nil
        switch (born, plainModified) {
        case (let born?, let modified?): return min(born, modified)
        case (let born?, nil): return born
        case (nil, let modified?): return modified
        case (nil, nil): return nil
        }
    }
}
