import Glibc

/// An open file, closed when the value goes away.
public final class FileDescriptor {
    public let rawValue: Int32

    package init(owning rawValue: Int32) { self.rawValue = rawValue }

    deinit { close(rawValue) }

    /// Reads at most `limit` bytes; the caller learns the file was larger
    /// when it gets `limit` bytes back and asked for `limit - 1`. The size
    /// from fstat sizes the buffer, so a small file costs one allocation.
    public func read(upTo limit: Int) throws(Errno) -> [UInt8] {
        var info = stat()
        let hint = fstat(rawValue, &info) == 0 && info.st_size >= 0 ? Int(info.st_size) + 1 : 64 * 1024
        var result: [UInt8] = []
        var capacity = max(1, min(limit, hint))
        while result.count < limit {
            if result.count == capacity { capacity = min(limit, capacity * 2) }
            let start = result.count
            let room = capacity - start
            var failure: Errno?
            var count = 0
            result.reserveCapacity(capacity)
            let fd = rawValue
            result.append(contentsOf: repeatElement(0, count: room))
            while true {
                count = result.withUnsafeMutableBytes { buffer in
                    guard let base = buffer.baseAddress else { return 0 }
                    return Glibc.read(fd, base + start, room)
                }
                if count >= 0 { break }
                let error = Errno.current
                if error != .interrupted {
                    failure = error
                    break
                }
            }
            result.removeLast(room - max(count, 0))
            if let failure { throw failure }
            if count == 0 { break }
        }
        return result
    }

    /// Writes every byte; a short write is continued, never dropped.
    public func write(_ bytes: some Collection<UInt8>) throws(Errno) {
        let contiguous = Array(bytes)
        var offset = 0
        while offset < contiguous.count {
            let fd = rawValue
            let done = offset
            let count = try systemCount {
                contiguous.withUnsafeBytes { buffer in
                    guard let base = buffer.baseAddress else { return 0 }
                    return Glibc.write(fd, base + done, buffer.count - done)
                }
            }
            offset += count
        }
    }

    /// Cuts the file back to `size` bytes.
    public func truncate(to size: Int) throws(Errno) {
        try system { ftruncate(rawValue, off_t(size)) }
    }

    /// The byte at `offset`, without moving the file position; nil past the end.
    public func byte(at offset: Int) throws(Errno) -> UInt8? {
        var byte: UInt8 = 0
        let count = try systemCount { pread(rawValue, &byte, 1, off_t(offset)) }
        return count == 1 ? byte : nil
    }

    /// An exclusive flock held while `body` runs.
    public func whileLocked<T>(_ body: () -> T) -> T {
        // A lock that cannot be had (EINTR aside, it always can) must not
        // stop the write; the lock only serialises courier's own writers.
        _ = try? system { flock(rawValue, LOCK_EX) }
        defer { flock(rawValue, LOCK_UN) }
        return body()
    }

    public func sync() throws(Errno) {
        try system { fsync(rawValue) }
    }

    public func status() throws(Errno) -> FileStatus {
        var info = stat()
        try system { fstat(rawValue, &info) }
        return FileStatus(info)
    }

    /// An exclusive advisory lock on the whole file (flock(2)), released
    /// when the descriptor closes, so a killed round never leaves it held.
    public func lockExclusively(wait: Bool) throws(Errno) -> Bool {
        do {
            try system { flock(rawValue, LOCK_EX | (wait ? 0 : LOCK_NB)) }
            return true
        } catch  where error == .wouldBlock {
            return false
        }
    }
}

/// The parts of stat(2) courier looks at.
public struct FileStatus: Sendable {
    public enum Kind: Sendable, Equatable {
        case regular, directory, symbolicLink, fifo, socket, characterDevice, blockDevice, unknown
    }

    public let kind: Kind
    public let size: Int
    public let mode: UInt32
    public let modified: Timestamp
    public let device: UInt64
    /// Hard links to the file: more than one means another name elsewhere.
    public let links: Int

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = .unknown
        }
        size = Int(info.st_size)
        mode = info.st_mode & 0o7777
        modified = Timestamp(secondsSinceEpoch: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec))
        device = UInt64(info.st_dev)
        links = Int(info.st_nlink)
    }
}
