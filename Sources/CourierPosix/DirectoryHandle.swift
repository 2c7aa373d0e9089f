import CPosix
import Glibc

/// An open directory. Every file operation of the spool is relative to
/// one of these (openat, renameat, unlinkat), so a name can never reach
/// outside the directory it was listed in. A handle knows how to name
/// itself to a person (`queued` inside the spool, the whole path outside
/// it), and every error it throws says the operation and the file.
package final class DirectoryHandle {
    package let descriptor: FileDescriptor
    /// For messages only; operations never go through the path again.
    package let path: String

    init(descriptor: FileDescriptor, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Opens a directory by path; `displayPath` is how messages name it
    /// (default: the path itself).
    package static func open(path: String, as displayPath: String? = nil) throws(SystemError) -> DirectoryHandle {
        let fd = try system("open", onPath: path) { Glibc.open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        let shown = displayPath ?? path
        return DirectoryHandle(descriptor: FileDescriptor(owning: fd, path: shown + "/"), path: shown)
    }

    /// How messages name a file in this directory: `queued/X`.
    package func displayPath(of name: FileName) -> String { FileDescriptor.path(of: name, in: path) }

    /// How messages name this directory itself: `queued/`.
    package var displayPath: String { path + "/" }

    /// Opens a subdirectory; `displayPath` replaces the default name in
    /// messages (the spool names its folders relative to itself).
    package func openDirectory(_ name: FileName, as displayPath: String? = nil) throws(SystemError) -> DirectoryHandle {
        let fd = try name.withCString { cName throws(SystemError) in
            try system("open", self.displayPath(of: name)) {
                openat(descriptor.rawValue, cName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
        }
        let shown = displayPath ?? self.displayPath(of: name)
        return DirectoryHandle(descriptor: FileDescriptor(owning: fd, path: shown + "/"), path: shown)
    }

    /// Opens a file in this directory; symbolic links are never followed
    /// and FIFOs never block the open.
    package func openFile(_ name: FileName, flags: Int32, mode: mode_t = 0o640) throws(SystemError) -> FileDescriptor {
        let fd = try name.withCString { cName throws(SystemError) in
            try system("open", displayPath(of: name)) {
                openat(descriptor.rawValue, cName, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode)
            }
        }
        return FileDescriptor(owning: fd, name: name, in: path)
    }

    /// mkdirat(2); false when the name already existed (`init` is safe
    /// to repeat).
    @discardableResult
    package func makeDirectory(_ name: FileName, mode: mode_t) throws(SystemError) -> Bool {
        do {
            try name.withCString { cName throws(SystemError) in
                _ = try system("create directory", displayPath(of: name)) { mkdirat(descriptor.rawValue, cName, mode) }
            }
            return true
        } catch let error where error.errno == .fileExists {
            return false
        }
    }

    /// rename(2) between two directories of one file system: atomic, and
    /// the only way an item ever changes state. This is courier's one
    /// rename call. Unless `replacing`, a name that exists is never
    /// replaced (`EEXIST`): renameat2's RENAME_NOREPLACE, or where the file
    /// system cannot check (`EINVAL`: GlusterFS, CephFS through libfuse2)
    /// link(2), which fails on an existing name atomically across clients,
    /// then unlink(2). A crash between those two leaves one file under both
    /// names, as a power cut can leave a rename half done.
    package func rename(
        _ name: FileName, to destination: DirectoryHandle, as newName: FileName, replacing: Bool
    ) throws(SystemError) {
        // The descriptors' numbers, not the handles, into the closures: a
        // captured handle cost a retain and a release apiece, twice a record
        // on the commit thread.
        let source = descriptor.rawValue
        let target = destination.descriptor.rawValue
        do {
            try name.withCString { from throws(Errno) in
                try newName.withCString { to throws(Errno) in
                    do throws(Errno) {
                        _ = try system { courier_rename(source, from, target, to, replacing ? 0 : 1) }
                    } catch let error where error == Errno(EINVAL) && !replacing {
                        _ = try system { linkat(source, from, target, to, 0) }
                        _ = try system { unlinkat(source, from, 0) }
                    }
                }
            }
        } catch {
            throw SystemError(
                "rename", path: displayPath(of: name), to: destination.displayPath(of: newName), error)
        }
    }

    /// A second name, `other`, for the file `name` in this directory (the
    /// fault seam keeps a file this way while a removal is not durable).
    package func link(_ name: FileName, as other: FileName) throws(SystemError) {
        let folder = descriptor.rawValue
        try name.withCString { from throws(SystemError) in
            try other.withCString { to throws(SystemError) in
                _ = try system("link", displayPath(of: name)) { linkat(folder, from, folder, to, 0) }
            }
        }
    }

    /// Removes a file; one that is already gone counts as removed, so every
    /// clean-up step is safe to repeat after a crash.
    package func remove(_ name: FileName) throws(SystemError) {
        _ = try removeIfPresent(name)
    }

    /// `remove`, saying whether the name was there: false when it had gone
    /// already, for a caller that must tell a person so.
    package func removeIfPresent(_ name: FileName) throws(SystemError) -> Bool {
        do {
            try name.withCString { cName throws(SystemError) in
                _ = try system("remove", displayPath(of: name)) { unlinkat(descriptor.rawValue, cName, 0) }
            }
            return true
        } catch let error where error.errno == .noSuchFile {
            return false
        }
    }

    /// Removes an empty directory; one already gone counts as removed.
    package func removeDirectory(_ name: FileName) throws(SystemError) {
        do {
            try name.withCString { cName throws(SystemError) in
                _ = try system("remove", displayPath(of: name)) { unlinkat(descriptor.rawValue, cName, AT_REMOVEDIR) }
            }
        } catch let error where error.errno == .noSuchFile {
            return
        }
    }

    /// lstat of a name: symbolic links are described, not followed.
    /// Nil when the name does not exist.
    package func status(of name: FileName) throws(SystemError) -> FileStatus? {
        var info = courier_status()
        do {
            try name.withCString { cName throws(SystemError) in
                _ = try system("look at", displayPath(of: name)) {
                    courier_status_at(descriptor.rawValue, cName, &info)
                }
            }
        } catch let error where error.errno == .noSuchFile {
            return nil
        }
        return FileStatus(info)
    }

    package func contains(_ name: FileName) throws(SystemError) -> Bool {
        try status(of: name) != nil
    }

    /// Sets a file's modification time (used by tests and by `prune`'s
    /// dry runs of aged spools).
    package func setModified(_ name: FileName, to time: Timestamp) throws(SystemError) {
        var times = [timespec](repeating: timespec(), count: 2)
        times[0] = time.timespec
        times[1] = time.timespec
        try name.withCString { cName throws(SystemError) in
            _ = try system("set the time of", displayPath(of: name)) {
                utimensat(descriptor.rawValue, cName, times, AT_SYMLINK_NOFOLLOW)
            }
        }
    }

    /// Sets a file's times to now. Unlike setting a given time this needs
    /// only write permission, not ownership: a script's file in queued/ may
    /// belong to another user of the courier group.
    package func touch(_ name: FileName) throws(SystemError) {
        // UTIME_NOW from <sys/stat.h>, a macro Swift does not import.
        let now = (1 << 30) - 1
        let times = [timespec](repeating: timespec(tv_sec: 0, tv_nsec: now), count: 2)
        try name.withCString { cName throws(SystemError) in
            _ = try system("touch", displayPath(of: name)) {
                utimensat(descriptor.rawValue, cName, times, AT_SYMLINK_NOFOLLOW)
            }
        }
    }

    /// Makes renames into and out of this directory durable.
    package func sync() throws(SystemError) {
        try descriptor.sync()
    }

    /// syncfs(2): every file's data on this directory's file system reaches
    /// the disk in one call, where one fsync per file would commit the
    /// journal once per file.
    package func syncFileSystem() throws(SystemError) {
        _ = try system("sync the file system of", displayPath) { courier_syncfs(descriptor.rawValue) }
    }

    /// Whether `syncFileSystem` reaches the disk here. On FUSE (GlusterFS,
    /// among others) Linux passes syncfs(2) on only to virtiofs, and it
    /// returns success having done nothing: files there need their own fsync.
    package var syncFileSystemReachesDisk: Bool {
        let type = courier_file_system_type(descriptor.rawValue)
        guard type >= 0 else { return false }
        return Self.syncfsReachesDisk(fileSystemType: type)
    }

    /// FUSE_SUPER_MAGIC, from <linux/magic.h>.
    static let fuseMagic = 0x6573_5546

    static func syncfsReachesDisk(fileSystemType: Int) -> Bool {
        fileSystemType != fuseMagic
    }

    /// A fresh stream of this directory's entries, read lazily so that a
    /// million-entry queue never sits in memory at once.
    package func entries() throws(SystemError) -> DirectoryStream {
        // A descriptor of its own (not a dup, which would share the
        // handle's file position): two streams over one folder at once,
        // a pass's and a listing's, must not move each other on.
        let copy = try system("list", displayPath) {
            openat(descriptor.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard let stream = fdopendir(copy) else {
            let error = Errno.current
            close(copy)
            throw SystemError("list", path: displayPath, error)
        }
        rewinddir(stream)
        return DirectoryStream(stream: stream, path: displayPath)
    }

    /// How many visible names there are, counted where readdir leaves
    /// them: a million-entry queue is counted without a name in memory.
    package func countNames() throws(SystemError) -> Int {
        try entries().countRemaining()
    }

    /// Every visible name, sorted; for small directories and for people.
    package func sortedNames() throws(SystemError) -> [FileName] {
        let stream = try entries()
        var names: [FileName] = []
        while let entry = try stream.next() { names.append(entry) }
        return names.sorted()
    }
}

/// readdir(3) as an iterator over visible names: `.`, `..` and every
/// name starting with a dot are skipped (editors, half-written copies).
package final class DirectoryStream {
    private let stream: OpaquePointer
    private let path: String
    /// The kind of the name `next` returned last, as the directory entry
    /// gives it (`d_type`); nil where the file system does not say
    /// (`DT_UNKNOWN`), and a caller must `lstat`.
    package private(set) var lastKind: FileStatus.Kind?
    /// The inode number of the name `next` returned last (`d_ino`): for
    /// finding a file's other name without a status call per name.
    package private(set) var lastInode: UInt64 = 0

    init(stream: OpaquePointer, path: String) {
        self.stream = stream
        self.path = path
    }

    deinit { closedir(stream) }

    /// readdir(3): nil at the end. It returns NULL at the end and on an
    /// error alike; only errno tells them apart, so it is cleared first
    /// and read at once.
    private func nextEntry() throws(SystemError) -> UnsafeMutablePointer<dirent>? {
        errno = 0
        guard let entry = readdir(stream) else {
            let error = Errno.current
            if error.code != 0 { throw SystemError("list", path: path, error) }
            return nil
        }
        return entry
    }

    package func next() throws(SystemError) -> FileName? {
        while let entry = try nextEntry() {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw -> [UInt8] in
                let bytes = raw.bindMemory(to: UInt8.self)
                let length = bytes.firstIndex(of: 0) ?? bytes.count
                return Array(bytes[0..<length])
            }
            if name.first == UInt8(ascii: ".") { continue }
            lastKind = Self.kind(of: entry.pointee.d_type)
            lastInode = UInt64(entry.pointee.d_ino)
            return FileName(bytes: name)
        }
        return nil
    }

    /// How many visible names are left from here to the end; none is
    /// copied out of readdir's buffer.
    package func countRemaining() throws(SystemError) -> Int {
        var count = 0
        while let entry = try nextEntry() {
            let visible = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                raw[0] != 0 && raw[0] != UInt8(ascii: ".")
            }
            if visible { count += 1 }
        }
        return count
    }

    /// The fingerprint (`FileName.fingerprint`) of every visible name from
    /// here to the end, hashed where readdir left it: a folder of a million
    /// names is listed without a million allocations.
    package func fingerprints(into found: inout [UInt64]) throws(SystemError) {
        while let entry = try nextEntry() {
            let fingerprint = withUnsafeBytes(of: &entry.pointee.d_name) { raw -> UInt64? in
                let length = raw.firstIndex(of: 0) ?? raw.count
                guard length > 0, raw[0] != UInt8(ascii: ".") else { return nil }
                return FileName.fingerprint(of: raw[0..<length])
            }
            if let fingerprint { found.append(fingerprint) }
        }
    }

    private static func kind(of type: UInt8) -> FileStatus.Kind? {
        switch Int(type) {
        case Int(DT_REG): return .regular
        case Int(DT_DIR): return .directory
        case Int(DT_LNK): return .symbolicLink
        case Int(DT_FIFO): return .fifo
        case Int(DT_SOCK): return .socket
        case Int(DT_CHR): return .characterDevice
        case Int(DT_BLK): return .blockDevice
        default: return nil
        }
    }
}
