import CourierPosix
import Glibc

extension Spool {
    /// Sets an entry's modification time: a deferral's stamp, or the stamp
    /// taken off again. False when the entry has gone (a person moved it).
    ///
    /// An explicit time needs the file's owner, and intake makes an entry
    /// by renaming the file a script dropped, which may belong to the
    /// script's user. Such an entry is replaced by courier's own copy of
    /// the same bytes first, the maildir way (staged in `tmp/`, fsynced,
    /// renamed over the entry), so that a crash leaves the old file or the
    /// new one, never neither. The caller fsyncs the folder.
    public func setModified(_ name: FileName, in state: SpoolState, to time: Timestamp) throws(SpoolError) -> Bool {
        let folder = directory(state)
        do {
            try folder.setModified(name, to: time)
            return true
        } catch let error where error.errno == .noSuchFile {
            return false
        } catch let error where error.errno == Errno(EPERM) || error.errno == Errno(EACCES) {
            return try replaceWithOwnCopy(name, in: state, modified: time)
        } catch {
            throw SpoolError(error)
        }
    }

    func replaceWithOwnCopy(_ name: FileName, in state: SpoolState, modified time: Timestamp)
        throws(SpoolError) -> Bool
    {
        let bytes: [UInt8]
        do {
            // An entry is never larger than the largest max-record-size.
            bytes = try read(name, in: state, limit: 64 << 20)
        } catch let error where error.errno == .noSuchFile {
            return false
        }
        let staged = try stageFile(bytes, for: name)
        do throws(SystemError) {
            try tmp.setModified(staged, to: time)
            try tmp.publish(staged, to: directory(state), as: name, syncDirectory: false, faults: faults)
        } catch {
            try? tmp.remove(staged)
            throw SpoolError(error)
        }
        return true
    }

    /// Whether the spool's file system keeps the nanoseconds of a
    /// modification time, where a deferral's count lives (`DeferralStamp`).
    /// Every Linux file system courier is meant for does; one that keeps
    /// whole seconds only would make every deferral look like the first.
    public func keepsDeferralStamps() -> Bool {
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
