import CPosix
import Glibc

/// An open file, closed when the value goes away. It knows how messages
/// name it, and every error it throws carries that name.
package final class FileDescriptor {
    package let rawValue: Int32
    private let folder: String
    private let name: FileName?

    /// For messages only (`tmp/X`); empty for pipes and sockets. A file
    /// opened by name keeps its folder's path and the name, and the text
    /// is made only when a message asks: a round opens a file per record.
    package var path: String { name.map { Self.path(of: $0, in: folder) } ?? folder }

    package init(owning rawValue: Int32, path: String = "") {
        self.rawValue = rawValue
        folder = path
        name = nil
    }

    /// A file opened by `name` in the directory messages call `folder`.
    package init(owning rawValue: Int32, name: FileName, in folder: String) {
        self.rawValue = rawValue
        self.folder = folder
        self.name = name
    }

    /// `folder/name`, made in one piece. Invalid UTF-8 in the name is shown
    /// as U+FFFD, as `FileName.description` shows it.
    package static func path(of name: FileName, in folder: String) -> String {
        let folder = folder.utf8
        return String(unsafeUninitializedCapacity: folder.count + 1 + name.bytes.count) { buffer in
            var end = buffer.initialize(fromContentsOf: folder)
            buffer.initializeElement(at: end, to: UInt8(ascii: "/"))
            end += 1
            end += UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(fromContentsOf: name.bytes)
            return end
        }
    }

    deinit { close(rawValue) }

    /// Reads at most `limit` bytes; the caller learns the file was larger
    /// when it gets `limit` bytes back and asked for `limit - 1`. The size
    /// from fstat sizes the buffer, so a small file costs one allocation.
    ///
    /// `size`: what an fstat of the file just said. A first read that
    /// returns exactly that many bytes, fewer than it asked for, is the end
    /// of the file: no second read to learn that (nor an fstat of its
    /// own). A file that grew since is read on to its end.
    package func read(upTo limit: Int, size: Int? = nil) throws(SystemError) -> [UInt8] {
        let hint: Int
        if let size, size >= 0 {
            hint = size + 1
        } else {
            var info = stat()
            hint = fstat(rawValue, &info) == 0 && info.st_size >= 0 ? Int(info.st_size) + 1 : 64 * 1024
        }
        var result: [UInt8] = []
        var capacity = max(1, min(limit, hint))
        while result.count < limit {
            if result.count == capacity { capacity = min(limit, capacity * 2) }
            let start = result.count
            let chunk = try readChunk(upTo: capacity - start)
            if start == 0 { result = chunk } else { result.append(contentsOf: chunk) }
            if chunk.isEmpty { break }
            if let size, start == 0, chunk.count == size, chunk.count < capacity { break }
        }
        return result
    }

    /// One read(2) of at most `room` bytes (again on EINTR) into a new
    /// array's uninitialized storage: the bytes the read fills are never
    /// zeroed first. Nearly every file is read by the first chunk alone.
    private func readChunk(upTo room: Int) throws(SystemError) -> [UInt8] {
        let fd = rawValue
        var failure: Errno?
        let chunk = [UInt8](unsafeUninitializedCapacity: room) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            while true {
                let count = Glibc.read(fd, base, room)
                if count >= 0 {
                    initialized = count
                    return
                }
                // errno is read right after read(2).
                let error = Errno.current
                if error != .interrupted {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw SystemError("read", path: path, failure) }
        return chunk
    }

    /// At most `limit` bytes from `offset` on (pread: the file position is
    /// left alone); fewer at the end of the file.
    package func read(from offset: Int, upTo limit: Int) throws(SystemError) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: max(0, limit))
        var filled = 0
        while filled < limit {
            var error = Errno(0)
            let count = result.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                let count = pread(rawValue, base + filled, limit - filled, off_t(offset + filled))
                if count < 0 { error = Errno.current }
                return count
            }
            if count == 0 { break }
            if count < 0 {
                if error == .interrupted { continue }
                throw SystemError("read", path: path, error)
            }
            filled += count
        }
        result.removeSubrange(filled...)
        return result
    }

    /// Writes every byte; a short write is continued, never dropped.
    package func write(_ bytes: some Collection<UInt8>) throws(SystemError) {
        let contiguous = Array(bytes)
        var offset = 0
        while offset < contiguous.count {
            let fd = rawValue
            let done = offset
            // The pointer is taken outside the call, so nothing runs
            // between write(2) and systemCount's read of errno.
            let result: Result<Int, Errno> = contiguous.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return .success(0) }
                do throws(Errno) {
                    return .success(try systemCount { Glibc.write(fd, base + done, buffer.count - done) })
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let count): offset += count
            case .failure(let error): throw SystemError("write", path: path, error)
            }
        }
    }

    /// Writes every byte at `offset` (pwrite: the file position is left
    /// alone, and a file opened without O_APPEND is overwritten there).
    package func write(_ bytes: [UInt8], at offset: Int) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let fd = rawValue
            let written = done
            let result: Result<Int, Errno> = bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return .success(0) }
                do throws(Errno) {
                    return .success(
                        try systemCount { pwrite(fd, base + written, buffer.count - written, off_t(offset + written)) })
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let count): done += count
            case .failure(let error): throw SystemError("write", path: path, error)
            }
        }
    }

    /// Cuts the file back to `size` bytes.
    package func truncate(to size: Int) throws(SystemError) {
        try system("truncate", path) { ftruncate(rawValue, off_t(size)) }
    }

    /// The byte at `offset`, without moving the file position; nil past the end.
    package func byte(at offset: Int) throws(SystemError) -> UInt8? {
        var byte: UInt8 = 0
        let count: Int
        do { count = try systemCount { pread(rawValue, &byte, 1, off_t(offset)) } } catch {
            throw SystemError("read", path: path, error)
        }
        return count == 1 ? byte : nil
    }

    /// An exclusive flock held while `body` runs.
    package func whileLocked<T>(_ body: () -> T) -> T {
        // A lock that cannot be had (EINTR aside, it always can) must not
        // stop the write; the lock only serialises courier's own writers.
        _ = try? system { flock(rawValue, LOCK_EX) }
        defer { flock(rawValue, LOCK_UN) }
        return body()
    }

    package func sync() throws(SystemError) {
        try system("sync", path) { fsync(rawValue) }
    }

    /// Sets the modification time to now (futimens: the open file itself,
    /// no lookup by name).
    package func touch() throws(SystemError) {
        // UTIME_NOW from <sys/stat.h>, a macro Swift does not import.
        let now = (1 << 30) - 1
        var times = (timespec(tv_sec: 0, tv_nsec: now), timespec(tv_sec: 0, tv_nsec: now))
        try system("touch", path) {
            withUnsafePointer(to: &times) {
                $0.withMemoryRebound(to: timespec.self, capacity: 2) { futimens(rawValue, $0) }
            }
        }
    }

    package func status() throws(SystemError) -> FileStatus {
        var info = courier_status()
        try system("look at", path) { courier_status_at(rawValue, "", &info) }
        return FileStatus(info)
    }

    /// An exclusive advisory lock on the whole file (flock(2)), released
    /// when the descriptor closes, so a killed round never leaves it held.
    package func lockExclusively(wait: Bool) throws(SystemError) -> Bool {
        try lock(LOCK_EX, wait: wait)
    }

    /// An exclusive lock as `lockExclusively(wait: true)`, waited for by
    /// asking again without blocking, after pauses that grow from 1 to
    /// 32 ms. GlusterFS can leave a blocking request waiting after the
    /// lock is free: a worker on it waited out a 76 s round while the
    /// other took and left the lock hundreds of times, and was granted it
    /// at once when strace interrupted its wait.
    package func lockExclusivelyAskingAgain() throws(SystemError) {
        var pause: Duration = .milliseconds(1)
        while try !lock(LOCK_EX, wait: false) {
            MonotonicInstant.sleep(until: MonotonicInstant.now() + pause)
            pause = min(pause * 2, .milliseconds(32))
        }
    }

    /// A shared advisory lock: many holders, none while one holds it
    /// exclusively.
    package func lockShared(wait: Bool) throws(SystemError) -> Bool {
        try lock(LOCK_SH, wait: wait)
    }

    private func lock(_ operation: Int32, wait: Bool) throws(SystemError) -> Bool {
        do {
            try system("lock", path) { flock(rawValue, operation | (wait ? 0 : LOCK_NB)) }
            return true
        } catch let error where error.errno == .wouldBlock {
            return false
        }
    }
}

/// The parts of statx(2) courier looks at.
package struct FileStatus: Sendable {
    package enum Kind: Sendable, Equatable {
        case regular, directory, symbolicLink, fifo, socket, characterDevice, blockDevice, unknown
    }

    package let kind: Kind
    package let size: Int
    package let mode: UInt32
    package let modified: Timestamp
    /// The inode's last change: rename(2) sets it, so for a spool entry it
    /// is when the entry last changed state.
    package let changed: Timestamp
    /// When the inode was made; rename(2) keeps it, so an entry's is when
    /// its record was written (intake renames the dropped file). Nil where
    /// the file system does not record it.
    package let born: Timestamp?
    package let device: UInt64
    package let inode: UInt64
    /// Hard links to the file: more than one means another name elsewhere.
    package let links: Int
    /// The file's owner (uid).
    package let owner: UInt32

    init(_ info: courier_status) {
        switch mode_t(info.mode) & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = .unknown
        }
        size = Int(info.size)
        mode = info.mode & 0o7777
        modified = Timestamp(
            secondsSinceEpoch: info.modified_seconds, nanoseconds: Int64(info.modified_nanoseconds))
        changed = Timestamp(secondsSinceEpoch: info.changed_seconds, nanoseconds: Int64(info.changed_nanoseconds))
        born =
            info.has_birth != 0
            ? Timestamp(secondsSinceEpoch: info.born_seconds, nanoseconds: Int64(info.born_nanoseconds)) : nil
        device = info.device
        inode = info.inode
        links = Int(info.links)
        owner = info.owner
    }

    /// Whether two names are one file: the two halves of a rename a power
    /// cut left undone, or a hard link.
    package func isSameFile(as other: FileStatus) -> Bool {
        device == other.device && inode == other.inode
    }

    /// The same file, neither written nor replaced since: a write moves
    /// its size or times, a rewrite by rename is another inode.
    package func isSameVersion(as other: FileStatus) -> Bool {
        isSameFile(as: other) && size == other.size && modified == other.modified && changed == other.changed
    }
}
