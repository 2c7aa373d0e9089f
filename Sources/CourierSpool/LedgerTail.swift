import CourierPosix
import Glibc

/// Where a reader of the ledger stopped: a day file, and the byte after
/// the last whole line it read there.
public struct LedgerPosition: Codable, Sendable, Equatable {
    public var day: String
    public var offset: Int

    public init(day: String, offset: Int) {
        self.day = day
        self.offset = offset
    }
}

extension Ledger {
    /// Bytes read at a time; a ledger line is far shorter.
    static let tailChunk = 1 << 20

    /// Visits the whole lines written after `position` (every line when it
    /// is nil), day file by day file, and returns where it stopped: after
    /// the last whole line, so a line still being written is read next
    /// time, whole. What `log --follow` and the event counters read with.
    public static func readNew(
        after position: LedgerPosition?, in directory: DirectoryHandle, _ visit: (LedgerLine) -> Void
    ) throws(SpoolError) -> LedgerPosition? {
        var reached = position
        for (day, name) in try dayFiles(in: directory) {
            if let position, day < position.day { continue }
            do {
                let file = try directory.openFile(name, flags: O_RDONLY)
                var offset = day == position?.day ? position?.offset ?? 0 : 0
                // A file shorter than where we stopped was replaced by hand:
                // read it again from the start.
                if try file.status().size < offset { offset = 0 }
                while true {
                    let chunk = try file.read(from: offset, upTo: tailChunk)
                    guard let lastNewline = chunk.lastIndex(of: 0x0A) else {
                        // A whole chunk without a newline is not a ledger
                        // line: step over it rather than stop for good.
                        if chunk.count == tailChunk { offset += chunk.count } else { break }
                        continue
                    }
                    for line in chunk[...lastNewline].split(separator: 0x0A) {
                        if let parsed = LedgerLine(parsing: Substring(String(decoding: line, as: UTF8.self))) {
                            visit(parsed)
                        }
                    }
                    offset += lastNewline + 1
                    if chunk.count < tailChunk { break }
                }
                reached = LedgerPosition(day: day, offset: offset)
            } catch let error where error.errno == .noSuchFile {
                continue  // pruned while we listed
            } catch {
                throw SpoolError(error)
            }
        }
        return reached
    }
}
