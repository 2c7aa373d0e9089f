import CourierPosix
import Glibc

/// The lines of a day's several files (one per worker) as one day's ledger:
/// in the order of their first column, which courier writes as RFC 3339 UTC
/// with milliseconds, so that byte order is time order. A merge, not a
/// sort: each file's lines keep their order, and of lines with equal times
/// the earlier file's come first (`LedgerFileName` order). Each file is
/// read a chunk at a time, so a merge holds a chunk per file, not the day.
struct MergedLines {
    private var sources: [Source]
    /// The bytes there are to read, in all the files.
    private(set) var length = 0

    /// `files` are read from their offsets to their sizes when opened: a
    /// line written meanwhile is the next reader's. A file pruned
    /// meanwhile has no lines. With `unterminated`, a last line without its
    /// newline is visited too (not whole), as `readDay` wants.
    init(
        _ files: [(name: FileName, offset: Int)], in directory: DirectoryHandle, chunk: Int, unterminated: Bool
    ) throws(SystemError) {
        sources = []
        for (name, offset) in files {
            let file: FileDescriptor
            do {
                file = try directory.openFile(name, flags: O_RDONLY)
            } catch let error where error.errno == .noSuchFile {
                continue  // pruned meanwhile
            }
            let size = try file.status().size
            // A file shorter than where the reader stopped was replaced by
            // hand: read again from the start.
            let start = size < offset ? 0 : offset
            length += size - start
            var source = Source(
                name: name, file: file, size: size, chunk: max(chunk, 1), unterminated: unterminated, base: start)
            try source.advance()
            sources.append(source)
        }
    }

    /// Visits each line, without its newline, and whether it had one.
    mutating func forEach(_ visit: (UnsafeBufferPointer<UInt8>, _ whole: Bool) -> Void) throws(SystemError) {
        while true {
            var first: Int?
            for index in sources.indices where sources[index].hasLine {
                // Strictly earlier: a tie stays with the earlier file.
                if let best = first, !(sources[index].key < sources[best].key) { continue }
                first = index
            }
            guard let first else { return }
            sources[first].visitLine(visit)
            try sources[first].advance()
        }
    }

    /// Each file opened, with the byte after the last whole line visited.
    var ends: [(name: FileName, offset: Int)] { sources.map { ($0.name, $0.done) } }
}

extension MergedLines {
    /// One file, a chunk at a time, at one line.
    fileprivate struct Source {
        let name: FileName
        let file: FileDescriptor
        let size: Int
        let chunk: Int
        let unterminated: Bool
        /// The file offset of `buffer[0]`.
        var base: Int
        var buffer: [UInt8] = []
        /// The line at hand is `buffer[start..<end]`; `next` is past its newline.
        var start = 0
        var end = 0
        var next = 0
        var hasLine = false
        var whole = false
        var key = TimeKey()
        /// The byte after the last whole line visited.
        var done: Int

        init(name: FileName, file: FileDescriptor, size: Int, chunk: Int, unterminated: Bool, base: Int) {
            self.name = name
            self.file = file
            self.size = size
            self.chunk = chunk
            self.unterminated = unterminated
            self.base = base
            done = base
        }

        func visitLine(_ visit: (UnsafeBufferPointer<UInt8>, Bool) -> Void) {
            buffer.withUnsafeBufferPointer { visit(UnsafeBufferPointer(rebasing: $0[start..<end]), whole) }
        }

        /// Moves to the next line, reading on when the buffer has no whole
        /// line left.
        mutating func advance() throws(SystemError) {
            if hasLine, whole { done = base + next }
            hasLine = false
            var from = next
            while true {
                let newline = buffer.withUnsafeBufferPointer { buffer -> Int? in
                    guard let base = buffer.baseAddress, from < buffer.count,
                        let found = memchr(base + from, 0x0A, buffer.count - from)
                    else { return nil }
                    return UnsafeRawPointer(base).distance(to: found)
                }
                if let newline {
                    take(from..<newline, whole: true)
                    return
                }
                let readAt = base + buffer.count
                guard readAt < size else {
                    if unterminated, from < buffer.count { take(from..<buffer.count, whole: false) }
                    return
                }
                let more = try file.read(from: readAt, upTo: min(chunk, size - readAt))
                // Shorter meanwhile (cut by hand): what is left is not read.
                guard !more.isEmpty else { return }
                if buffer.count - from >= chunk {
                    // A whole chunk without a newline is not a ledger line:
                    // stepped over rather than held for good.
                    buffer = more
                    base = readAt
                    done = readAt
                } else {
                    buffer.removeFirst(from)
                    base += from
                    buffer += more
                }
                from = 0
            }
        }

        private mutating func take(_ line: Range<Int>, whole: Bool) {
            start = line.lowerBound
            end = line.upperBound
            next = whole ? end + 1 : end
            self.whole = whole
            hasLine = true
            key = buffer.withUnsafeBufferPointer { TimeKey(UnsafeBufferPointer(rebasing: $0[line])) }
        }
    }
}

/// A line's first column, up to its first 24 bytes (`2026-11-30T07:00:00.123Z`)
/// as three big-endian words: one comparison of integers, not of bytes.
/// Only a malformed line has a longer time, and it ties on the first 24.
struct TimeKey: Comparable {
    private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)

    init() {}

    init(_ line: UnsafeBufferPointer<UInt8>) {
        var first: UInt64 = 0
        var second: UInt64 = 0
        var third: UInt64 = 0
        for index in 0..<min(24, line.count) {
            let byte = line[index]
            if byte == 0x09 { break }
            let shifted = UInt64(byte) << (56 - 8 * UInt64(index % 8))
            switch index / 8 {
            case 0: first |= shifted
            case 1: second |= shifted
            default: third |= shifted
            }
        }
        words = (first, second, third)
    }

    static func < (lhs: TimeKey, rhs: TimeKey) -> Bool { lhs.words < rhs.words }

    static func == (lhs: TimeKey, rhs: TimeKey) -> Bool { lhs.words == rhs.words }
}
