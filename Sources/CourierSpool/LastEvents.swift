import CourierPosix
import Glibc

/// What `list` shows of an item's history: its last event, and the HTTP
/// status that came with it.
public struct LastEvent: Sendable, Equatable {
    public let event: LedgerEvent
    /// 0 when there was no answer.
    public let status: Int

    public init(event: LedgerEvent, status: Int) {
        self.event = event
        self.status = status
    }
}

/// The last event of each (subscriber, key), read from the newest day file
/// back, and only as far back as the questions asked so far need: `list`
/// over a million entries prints its first rows after one day file, not
/// after the whole ledger. A day file's lines are not parsed whole: the
/// columns wanted are found by their tabs, so a million lines cost a
/// fraction of a second.
public final class LastEvents {
    private let directory: DirectoryHandle
    /// Day files not read yet, oldest first.
    private var unread: [FileName]
    /// By the ledger's escaped `subscriber TAB key`; `day` is the index of
    /// the file the line came from, so a later line of the same day
    /// replaces it and an older day's never does.
    private var found: [String: (last: LastEvent, day: Int)] = [:]

    public init(directory: DirectoryHandle) throws(SpoolError) {
        self.directory = directory
        unread = try Ledger.dayFiles(in: directory).map(\.name)
    }

    /// The newest line of the item in the ledger; nil when it has none
    /// (moved in by hand, or pruned), which reads every day file once.
    public func last(subscriber: String, key: String) throws(SpoolError) -> LastEvent? {
        let id = LedgerLine.escape(subscriber) + "\t" + LedgerLine.escape(key)
        while found[id] == nil, let name = unread.popLast() { try read(name, day: unread.count) }
        return found[id]?.last
    }

    private func read(_ name: FileName, day: Int) throws(SpoolError) {
        let bytes: [UInt8]
        do {
            let file = try directory.openFile(name, flags: O_RDONLY)
            bytes = try file.read(from: 0, upTo: file.status().size)
        } catch let error where error.errno == .noSuchFile {
            return  // pruned meanwhile
        } catch {
            throw SpoolError(error)
        }
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            var tabs: [Int] = []
            tabs.reserveCapacity(9)
            // A last line without its newline is still being written: left.
            while start < buffer.count, let newline = memchr(base + start, 0x0A, buffer.count - start) {
                let end = UnsafeRawPointer(base).distance(to: newline)
                defer { start = end + 1 }
                // The nine columns' eight tabs; a line with more or fewer is
                // malformed and passed over, as every reader does.
                tabs.removeAll(keepingCapacity: true)
                var from = start
                while from < end, let tab = memchr(base + from, 0x09, end - from) {
                    tabs.append(UnsafeRawPointer(base).distance(to: tab))
                    from = tabs[tabs.count - 1] + 1
                    if tabs.count > 8 { break }
                }
                guard tabs.count == 8 else { continue }
                let id = String(decoding: UnsafeBufferPointer(rebasing: buffer[(tabs[1] + 1)..<tabs[3]]), as: UTF8.self)
                if let earlier = found[id], earlier.day != day { continue }
                let eventText = String(
                    decoding: UnsafeBufferPointer(rebasing: buffer[(tabs[3] + 1)..<tabs[4]]), as: UTF8.self)
                let statusText = String(
                    decoding: UnsafeBufferPointer(rebasing: buffer[(tabs[4] + 1)..<tabs[5]]), as: UTF8.self)
                guard let event = LedgerEvent(rawValue: eventText), let status = Int(statusText) else { continue }
                found[id] = (LastEvent(event: event, status: status), day)
            }
        }
    }
}
