import CourierIdentifiers
import CourierPosix
import Glibc

/// What `list` shows of an item's history: its last event, and the HTTP
/// status that came with it.
package struct LastEvent: Sendable, Equatable {
    package let event: LedgerEvent
    /// 0 when there was no answer.
    package let status: Int

    package init(event: LedgerEvent, status: Int) {
        self.event = event
        self.status = status
    }
}

/// The last event of each (subscriber, key), read from the newest day file
/// back, and only as far back as the questions asked so far need: `list`
/// over a million entries prints its first rows after one day file, not
/// after the whole ledger. A day file's lines are not parsed whole: the
/// columns wanted are found by their tabs, and the item is known by a
/// fingerprint rather than a string (a million strings cost seconds to
/// allocate, hash and compare; a million fingerprints a tenth of that).
package final class LastEvents {
    private let directory: DirectoryHandle
    /// Days not read yet, oldest first, each with its files.
    private var unread: [[FileName]]
    /// By the fingerprint of the ledger's `subscriber TAB key`; `day` is the
    /// index of the day the line came from, so a later line of the same
    /// day replaces it and an older day's never does.
    private var found: [Fingerprint: Newest] = [:]

    /// Twelve bytes a line, not forty: the table's size is what a lookup
    /// waits for, a million entries being far larger than the caches.
    fileprivate struct Newest {
        let event: LedgerEvent
        let status: Int32
        let day: Int32
    }

    /// Bytes read at a time: a reused buffer, rather than one as large as
    /// a day file (100 MB at a million lines) to be zeroed and copied into.
    let chunk: Int

    package convenience init(directory: DirectoryHandle) throws(SpoolError) {
        try self.init(directory: directory, chunk: 4 << 20)
    }

    init(directory: DirectoryHandle, chunk: Int) throws(SpoolError) {
        self.directory = directory
        self.chunk = chunk
        unread = try Ledger.days(in: directory).map(\.files)
    }

    /// The newest line of the item in the ledger; nil when it has none
    /// (moved in by hand, or pruned), which reads every day file once.
    /// `subscriber`: nil for lines of no subscriber's (`-`).
    package func last(subscriber: SubscriberName?, key: String) throws(SpoolError) -> LastEvent? {
        let column = subscriber?.value ?? LedgerLine.noSubscriber
        let id = Array((LedgerLine.escape(column) + "\t" + LedgerLine.escape(key)).utf8).withUnsafeBufferPointer {
            Fingerprint($0)
        }
        while found[id] == nil, let files = unread.popLast() { try read(files, day: Int32(unread.count)) }
        return found[id].map { LastEvent(event: $0.event, status: Int($0.status)) }
    }

    /// A day of several files (one per worker) is read merged by time, so
    /// that its later line is the later in time, whichever file it is in.
    private func read(_ files: [FileName], day: Int32) throws(SpoolError) {
        guard files.count > 1 else {
            if let name = files.first { try read(name, day: day) }
            return
        }
        do {
            var merged = try MergedLines(files.map { ($0, 0) }, in: directory, chunk: chunk, unterminated: false)
            found.reserveCapacity(found.count + merged.length / 100)
            try merged.forEach { line, _ in take(line, day: day) }
        } catch {
            throw SpoolError(error)
        }
    }

    private func read(_ name: FileName, day: Int32) throws(SpoolError) {
        do {
            let file = try directory.openFile(name, flags: O_RDONLY)
            // As long as it is now; a line written meanwhile is newer than
            // this listing.
            let size = try file.status().size
            // A ledger line is some 100 bytes: room for the file's items at once.
            found.reserveCapacity(found.count + size / 100)
            var offset = 0
            while offset < size {
                let bytes = try file.read(from: offset, upTo: min(chunk, size - offset))
                let used = index(bytes, day: day)
                // A chunk without one whole line is no ledger: stepped over.
                offset += used > 0 ? used : bytes.count
                if bytes.isEmpty { break }
            }
        } catch let error where error.errno == .noSuchFile {
            return  // pruned meanwhile
        } catch {
            throw SpoolError(error)
        }
    }

    /// Takes the whole lines of `bytes` into the table; returns how many
    /// bytes they were (a last line without its newline is read next time,
    /// or, at the end of the file, left: it is still being written).
    private func index(_ bytes: [UInt8], day: Int32) -> Int {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return 0 }
            var start = 0
            while start < buffer.count, let newline = memchr(base + start, 0x0A, buffer.count - start) {
                let end = UnsafeRawPointer(base).distance(to: newline)
                take(UnsafeBufferPointer(rebasing: buffer[start..<end]), day: day)
                start = end + 1
            }
            return start
        }
    }

    /// Takes one line, without its newline, into the table.
    @inline(__always)
    private func take(_ line: UnsafeBufferPointer<UInt8>, day: Int32) {
        guard let base = line.baseAddress else { return }
        // The nine columns' eight tabs; a line with more or fewer is
        // malformed and passed over, as every reader does. Only the tabs
        // around subscriber, key, event and status are kept.
        var count = 0
        var from = 0
        var subscriberStart = 0
        var keyEnd = 0
        var eventEnd = 0
        var statusEnd = 0
        while count < 8, let tab = memchr(base + from, 0x09, line.count - from) {
            let at = UnsafeRawPointer(base).distance(to: tab)
            switch count {
            case 1: subscriberStart = at + 1
            case 3: keyEnd = at
            case 4: eventEnd = at
            case 5: statusEnd = at
            default: break
            }
            from = at + 1
            count += 1
        }
        guard count == 8, memchr(base + from, 0x09, line.count - from) == nil else { return }
        let id = Fingerprint(UnsafeBufferPointer(rebasing: line[subscriberStart..<keyEnd]))
        let eventText = String(decoding: UnsafeBufferPointer(rebasing: line[(keyEnd + 1)..<eventEnd]), as: UTF8.self)
        let statusText = String(
            decoding: UnsafeBufferPointer(rebasing: line[(eventEnd + 1)..<statusEnd]), as: UTF8.self)
        guard let event = LedgerEvent(rawValue: eventText), let status = Int32(statusText) else { return }
        let newest = Newest(event: event, status: status, day: day)
        // One lookup per line: a newer day's entry stays, this day's is
        // replaced by its later line.
        Self.keepNewest(&found[id, default: newest], newest)
    }
}

extension LastEvents {
    fileprivate static func keepNewest(_ entry: inout Newest, _ line: Newest) {
        if entry.day == line.day { entry = line }
    }
}

/// 128 bits of `subscriber TAB key`: two 64-bit hashes of different kinds
/// (FNV-1a, and a polynomial with another multiplier), so two items would
/// have to collide in both, a chance of some 2^-100 in a million.
struct Fingerprint: Hashable {
    let first: UInt64
    let second: UInt64

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = UInt64(bytes.count)
        for byte in bytes {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = second &* 0x9e37_79b9_7f4a_7c15 &+ UInt64(byte)
        }
        self.first = first
        self.second = second
    }
}
