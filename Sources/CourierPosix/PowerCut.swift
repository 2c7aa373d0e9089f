import Glibc

/// A power cut in process, for the fault seam (`FaultPlan(powerCutAtSync:)`):
/// what RocksDB's FaultInjectionTestFS does, on the real files. Every write,
/// rename and removal the seam sees is noted until a sync makes it durable;
/// at the planned sync, instead of syncing, everything not yet durable is
/// undone, as a disk whose volatile cache is lost would leave it: file data
/// written since its last fsync is gone (a new file is left empty, an
/// appended one cut back), a rename whose new folder was not fsynced since
/// is undone (and the file it replaced is back), a removal whose folder was
/// not fsynced since is undone. `syncfs` makes everything durable. Then the
/// sync fails, and a test runs courier's recovery on what is left, in
/// milliseconds instead of a loop device's seconds.
///
/// It models a journaling file system that keeps a folder's changes only
/// when that folder is synced; the real file systems' own rules (btrfs's
/// half-done renames, among them) are scripts/powerloss-test.sh's.
package final class PowerCut {
    /// A folder or file by device and inode: handles opened twice are one.
    struct Identity: Hashable {
        let device: UInt64
        let inode: UInt64

        init?(_ descriptor: FileDescriptor) {
            guard let status = try? descriptor.status() else { return nil }
            device = status.device
            inode = status.inode
        }
    }

    private enum Change {
        /// New file data at `name` in `folder`, not yet fsynced.
        case newData(folder: DirectoryHandle, name: FileName)
        /// Bytes appended to an open file after `offset`.
        case appended(file: FileDescriptor, offset: Int)
        case renamed(from: DirectoryHandle, name: FileName, to: DirectoryHandle, newName: FileName, backup: FileName?)
        case removed(folder: DirectoryHandle, name: FileName, backup: FileName)
    }

    private var pending: [Change] = []
    private var backups = 0
    /// Set once the cut has happened: nothing more is noted.
    package private(set) var happened = false

    init() {}

    /// A hidden second name in `folder` that keeps `name`'s file while a
    /// change to it is not durable (courier never reads hidden names).
    private func backup(_ name: FileName, in folder: DirectoryHandle) -> FileName? {
        backups += 1
        let hidden = FileName(".powercut-\(getpid())-\(backups)")
        do { try folder.link(name, as: hidden) } catch { return nil }
        return hidden
    }

    package func wroteNewFile(_ name: FileName, in folder: DirectoryHandle) {
        guard !happened else { return }
        pending.append(.newData(folder: folder, name: name))
    }

    package func appended(to file: FileDescriptor, at offset: Int) {
        guard !happened else { return }
        pending.append(.appended(file: file, offset: offset))
    }

    /// Before a rename: a file it will replace is kept under a hidden name.
    package func willRename(_ name: FileName, in from: DirectoryHandle, to: DirectoryHandle, as newName: FileName)
        -> FileName?
    {
        guard !happened, (try? to.status(of: newName)) != nil else { return nil }
        return backup(newName, in: to)
    }

    package func renamed(
        _ name: FileName, in from: DirectoryHandle, to: DirectoryHandle, as newName: FileName, backup: FileName?
    ) {
        guard !happened else { return }
        // New data staged under the old name now lives under the new one.
        pending = pending.map { change in
            if case .newData(let folder, let staged) = change, folder === from, staged == name {
                return .newData(folder: to, name: newName)
            }
            return change
        }
        pending.append(.renamed(from: from, name: name, to: to, newName: newName, backup: backup))
    }

    package func willRemove(_ name: FileName, in folder: DirectoryHandle) {
        guard !happened, (try? folder.status(of: name)) != nil, let hidden = backup(name, in: folder) else { return }
        pending.append(.removed(folder: folder, name: name, backup: hidden))
    }

    package func syncedFolder(_ folder: DirectoryHandle) {
        guard !happened, let synced = Identity(folder.descriptor) else { return }
        pending.removeAll { change in
            switch change {
            case .renamed(_, _, let to, _, _): return Identity(to.descriptor) == synced
            case .removed(let removedFrom, _, _): return Identity(removedFrom.descriptor) == synced
            case .newData, .appended: return false
            }
        }
    }

    /// An open file fsynced: what was appended to it is durable.
    package func syncedFile(_ file: FileDescriptor) {
        guard !happened, let synced = Identity(file) else { return }
        pending.removeAll { change in
            if case .appended(let appendedTo, _) = change { return Identity(appendedTo) == synced }
            return false
        }
    }

    /// A new file fsynced as it was written.
    package func syncedNewFile(_ name: FileName, in folder: DirectoryHandle) {
        guard !happened else { return }
        pending.removeAll { change in
            if case .newData(let written, let staged) = change { return written === folder && staged == name }
            return false
        }
    }

    package func syncedAll() {
        guard !happened else { return }
        pending.removeAll()
    }

    /// The cut: undoes what is not durable, newest first.
    package func cut() {
        guard !happened else { return }
        happened = true
        for change in pending.reversed() {
            switch change {
            case .newData(let folder, let name):
                if let file = try? folder.openFile(name, flags: O_WRONLY) { try? file.truncate(to: 0) }
            case .appended(let file, let offset):
                try? file.truncate(to: offset)
            case .renamed(let from, let name, let to, let newName, let backup):
                try? to.rename(newName, to: from, as: name, replacing: false)
                if let backup { try? to.rename(backup, to: to, as: newName, replacing: false) }
            case .removed(let folder, let name, let backup):
                try? folder.rename(backup, to: folder, as: name, replacing: false)
            }
        }
        pending.removeAll()
    }
}
