import CPosix
import Glibc

/// An open directory. Every file operation of the spool is relative to
/// one of these (openat, renameat, unlinkat), so a name can never reach
/// outside the directory it was listed in.
public final class DirectoryHandle {
    public let descriptor: FileDescriptor
    /// For messages only; operations never go through the path again.
    public let path: String

    init(descriptor: FileDescriptor, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    public static func open(path: String) throws(Errno) -> DirectoryHandle {
        let fd = try system { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        return DirectoryHandle(descriptor: FileDescriptor(owning: fd), path: path)
    }

    public func openDirectory(_ name: FileName) throws(Errno) -> DirectoryHandle {
        let fd = try name.withCString { cName throws(Errno) in
            try system { openat(descriptor.rawValue, cName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        }
        return DirectoryHandle(descriptor: FileDescriptor(owning: fd), path: path + "/" + name.description)
    }

    /// Opens a file in this directory; symbolic links are never followed
    /// and FIFOs never block the open.
    public func openFile(_ name: FileName, flags: Int32, mode: mode_t = 0o640) throws(Errno) -> FileDescriptor {
        let fd = try name.withCString { cName throws(Errno) in
            try system { openat(descriptor.rawValue, cName, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode) }
        }
        return FileDescriptor(owning: fd)
    }

    public func makeDirectory(_ name: FileName, mode: mode_t) throws(Errno) {
        try name.withCString { cName throws(Errno) in
            _ = try system { mkdirat(descriptor.rawValue, cName, mode) }
        }
    }

    /// rename(2) between two directories of one file system: atomic, and
    /// the only way an item ever changes state.
    public func rename(_ name: FileName, to destination: DirectoryHandle, as newName: FileName) throws(Errno) {
        try name.withCString { from throws(Errno) in
            try newName.withCString { to throws(Errno) in
                _ = try system { renameat(descriptor.rawValue, from, destination.descriptor.rawValue, to) }
            }
        }
    }

    /// Removes a file; one that is already gone counts as removed, so every
    /// clean-up step is safe to repeat after a crash.
    public func remove(_ name: FileName) throws(Errno) {
        do {
            try name.withCString { cName throws(Errno) in
                _ = try system { unlinkat(descriptor.rawValue, cName, 0) }
            }
        } catch  where error == .noSuchFile {
            return
        }
    }

    /// lstat of a name: symbolic links are described, not followed.
    /// Nil when the name does not exist.
    public func status(of name: FileName) throws(Errno) -> FileStatus? {
        var info = stat()
        do {
            try name.withCString { cName throws(Errno) in
                _ = try system { fstatat(descriptor.rawValue, cName, &info, AT_SYMLINK_NOFOLLOW) }
            }
        } catch  where error == .noSuchFile {
            return nil
        }
        return FileStatus(info)
    }

    public func contains(_ name: FileName) throws(Errno) -> Bool {
        try status(of: name) != nil
    }

    /// Sets a file's modification time (used by tests and by `prune`'s
    /// dry runs of aged spools).
    public func setModified(_ name: FileName, to time: Timestamp) throws(Errno) {
        var times = [timespec](repeating: timespec(), count: 2)
        times[0] = time.timespec
        times[1] = time.timespec
        try name.withCString { cName throws(Errno) in
            _ = try system { utimensat(descriptor.rawValue, cName, times, AT_SYMLINK_NOFOLLOW) }
        }
    }

    /// Sets a file's times to now. Unlike setting a given time this needs
    /// only write permission, not ownership: a script's file in queued/ may
    /// belong to another user of the courier group.
    public func touch(_ name: FileName) throws(Errno) {
        // UTIME_NOW from <sys/stat.h>, a macro Swift does not import.
        let now = (1 << 30) - 1
        let times = [timespec](repeating: timespec(tv_sec: 0, tv_nsec: now), count: 2)
        try name.withCString { cName throws(Errno) in
            _ = try system { utimensat(descriptor.rawValue, cName, times, AT_SYMLINK_NOFOLLOW) }
        }
    }

    /// Makes renames into and out of this directory durable.
    public func sync() throws(Errno) {
        try descriptor.sync()
    }

    /// syncfs(2): every file's data on this directory's file system reaches
    /// the disk in one call, where one fsync per file would commit the
    /// journal once per file.
    public func syncFileSystem() throws(Errno) {
        _ = try system { courier_syncfs(descriptor.rawValue) }
    }

    /// A fresh stream of this directory's entries, read lazily so that a
    /// million-entry queue never sits in memory at once.
    public func entries() throws(Errno) -> DirectoryStream {
        let copy = try system { dup(descriptor.rawValue) }
        guard let stream = fdopendir(copy) else {
            let error = Errno.current
            close(copy)
            throw error
        }
        rewinddir(stream)
        return DirectoryStream(stream: stream)
    }

    /// Every visible name, sorted; for small directories and for people.
    public func sortedNames() throws(Errno) -> [FileName] {
        let stream = try entries()
        var names: [FileName] = []
        while let entry = try stream.next() { names.append(entry) }
        return names.sorted()
    }
}

/// readdir(3) as an iterator over visible names: `.`, `..` and every
/// name starting with a dot are skipped (editors, half-written copies).
public final class DirectoryStream {
    private let stream: OpaquePointer

    init(stream: OpaquePointer) { self.stream = stream }

    deinit { closedir(stream) }

    public func next() throws(Errno) -> FileName? {
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw Errno.current }
                return nil
            }
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw -> [UInt8] in
                let bytes = raw.bindMemory(to: UInt8.self)
                let length = bytes.firstIndex(of: 0) ?? bytes.count
                return Array(bytes[0..<length])
            }
            if name.first == UInt8(ascii: ".") { continue }
            return FileName(bytes: name)
        }
    }
}
