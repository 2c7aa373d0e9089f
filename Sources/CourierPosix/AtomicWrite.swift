import Glibc

/// The one way courier makes a new file appear whole, maildir's: write it
/// under a unique name in a staging directory (`O_EXCL`: never over
/// another writer's file), `fsync` it, `rename` it into place, then `fsync`
/// the target directory so the rename survives a power cut. Used for spool
/// entries and state files, the sink's records and the metrics file.
///
/// The two halves are apart for a writer that must do something between
/// them (intake appends its ledger lines before the renames).
extension DirectoryHandle {
    /// The first half: `bytes` written to `staged` in this (staging)
    /// directory and fsynced. A failed write removes what it staged.
    /// Without `syncData` the caller syncs many staged files at once
    /// (`syncFileSystem`) before it publishes any of them. `mode` is less
    /// the umask, unless `ignoringUmask`; `owner` gives the file away
    /// (root writing into another user's spool).
    package func stage(
        _ bytes: [UInt8], as staged: FileName, mode: mode_t = 0o640, ignoringUmask: Bool = false,
        owner: (user: uid_t, group: gid_t)? = nil, syncData: Bool = true, faults: FaultPlan? = nil
    ) throws(SystemError) {
        // Not removed when it cannot be made: the name is someone else's.
        let file = try openFile(staged, flags: O_WRONLY | O_CREAT | O_EXCL, mode: mode)
        do {
            if let owner { try file.setOwner(owner) }
            if ignoringUmask { try file.setMode(mode) }
            try faults?.check(.write, path: displayPath(of: staged))
            try file.write(bytes)
            faults?.powerCut?.wroteNewFile(staged, in: self)
            if syncData {
                try faults?.check(.sync, path: displayPath(of: staged))
                try file.sync()
                faults?.powerCut?.syncedNewFile(staged, in: self)
            }
        } catch {
            // Best effort: the write already failed, and prune removes a
            // leftover the removal missed after 36 h.
            try? remove(staged)
            throw error
        }
    }

    /// The second half: `staged` renamed from this directory to `name` in
    /// `directory`, and (with `syncDirectory`) the directory fsynced. A
    /// failed rename removes the staged file.
    /// `replacing: false` never replaces an existing `name` (`EEXIST`).
    package func publish(
        _ staged: FileName, to directory: DirectoryHandle, as name: FileName, syncDirectory: Bool = true,
        replacing: Bool = true, faults: FaultPlan? = nil
    ) throws(SystemError) {
        do throws(SystemError) {
            if let faults {
                do { try faults.check(.rename) } catch {
                    throw SystemError(
                        "rename", path: displayPath(of: staged), to: directory.displayPath(of: name), error.errno)
                }
            }
            try rename(staged, to: directory, as: name, replacing: replacing)
        } catch {
            try? remove(staged)  // as in `stage`
            throw error
        }
        guard syncDirectory else { return }
        try faults?.check(.sync, path: directory.displayPath)
        try directory.sync()
    }

    /// Both halves: `bytes` become `name` in `directory`, staged here.
    package func writeAtomically(
        _ bytes: [UInt8], as name: FileName, in directory: DirectoryHandle, staged: FileName, mode: mode_t = 0o640,
        syncDirectory: Bool = true, faults: FaultPlan? = nil
    ) throws(SystemError) {
        try stage(bytes, as: staged, mode: mode, faults: faults)
        try publish(staged, to: directory, as: name, syncDirectory: syncDirectory, faults: faults)
    }
}
