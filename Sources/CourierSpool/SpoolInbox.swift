import CourierPosix
import Glibc

/// The two folders a producer writes, `tmp/` and `queued/`, and nothing
/// else of the spool: what `courier enqueue` opens. A member of the spool's
/// producers group (`courier init --group`) may open these two and no
/// other folder, so a whole `Spool` is more than it can have.
package struct SpoolInbox {
    package let path: String
    let tmp: DirectoryHandle
    let queued: DirectoryHandle
    private var stagingNames = StagingNames()

    package init(path: String) throws(SpoolError) {
        self.path = path
        // By path, not relative to a handle on the spool: a producer may
        // pass through the spool (0751) but not open it.
        func folder(_ name: String) throws(SpoolError) -> DirectoryHandle {
            do { return try DirectoryHandle.open(path: path + "/" + name, as: name) } catch {
                throw .notASpool(path: path, missing: name + "/", error.errno)
            }
        }
        tmp = try folder(Spool.tmpName)
        queued = try folder(SpoolState.queued.rawValue)
    }

    /// A unique name for a file to drop, as maildir makes them.
    package mutating func uniqueName(for name: FileName) -> FileName {
        stagingNames.next(for: name)
    }

    /// `bytes` become `queued/NAME` the maildir way (tmp/, fsync, rename,
    /// fsync). The file is 0640 whatever the umask: in a spool opened to
    /// producers, `queued/` gives it the producers' group, and courier, a
    /// member, must be able to read it.
    /// Root's file is given to the owner of `queued/` (and its group): a
    /// root-owned 0640 file is one the spool owner's rounds cannot read,
    /// and `sudo courier enqueue` is easy to type.
    package mutating func drop(_ bytes: [UInt8], named name: FileName) throws(SpoolError) {
        let staged = stagingNames.next(for: name)
        do throws(SystemError) {
            let folder = geteuid() == 0 ? try queued.owner() : nil
            let owner = folder.flatMap { $0.user == 0 ? nil : $0 }
            try tmp.stage(bytes, as: staged, mode: 0o640, ignoringUmask: true, owner: owner)
            try tmp.publish(staged, to: queued, as: name)
        } catch {
            throw SpoolError(error)
        }
    }
}
