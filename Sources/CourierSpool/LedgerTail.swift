import CourierPosix
import CourierSupport
import Glibc

/// Where a reader of the ledger stopped: every file from `day` on is read
/// from its offset here, the byte after the last whole line read in it (a
/// file not named, from its start). A position reaches back a day before
/// the newest day read: with several workers, one may still append a line
/// of yesterday after another has begun today (a round across midnight, a
/// clock a little behind), and that line must be read once, not never.
package struct LedgerPosition: Codable, Sendable, Equatable {
    /// The first UTC day still read, `YYYY-MM-DD`.
    package var day: String
    /// By file name.
    package var offsets: [String: Int]

    package init(day: String, offsets: [String: Int] = [:]) {
        self.day = day
        self.offsets = offsets
    }

    private enum CodingKeys: String, CodingKey {
        case day, offsets
        /// Before a day could have several files: the offset in the day's own.
        case offset
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        day = try container.decode(String.self, forKey: .day)
        if let offsets = try container.decodeIfPresent([String: Int].self, forKey: .offsets) {
            self.offsets = offsets
        } else {
            // `.courier/event-counts.json` of an earlier courier: its day
            // was the newest, and read only in the day's own file.
            offsets = [LedgerFileName(day: day).description: try container.decode(Int.self, forKey: .offset)]
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(day, forKey: .day)
        try container.encode(offsets, forKey: .offsets)
    }
}

extension Ledger {
    /// Bytes read at a time; a ledger line is far shorter.
    static let tailChunk = 1 << 20

    /// Visits the whole lines written after `position` (every line when it
    /// is nil), day by day, a day's several files merged by time, and
    /// returns where it stopped: after each file's last whole line, so a
    /// line still being written is read next time, whole. What `log
    /// --follow` and the event counters read with.
    package static func readNew(
        after position: LedgerPosition?, in directory: DirectoryHandle, _ visit: (LedgerLine) -> Void
    ) throws(SpoolError) -> LedgerPosition? {
        let days = try days(in: directory)
        guard let newest = days.last?.day else { return position }
        let kept = max(position?.day ?? "", Self.dayBefore(newest))
        var offsets: [String: Int] = [:]
        for day in days where day.day >= position?.day ?? "" {
            let ends: [(name: FileName, offset: Int)]
            if day.files.count == 1, let name = day.files.first {
                ends = try readNew(name, from: position?.offsets[name.description] ?? 0, in: directory, visit)
            } else {
                do {
                    var merged = try MergedLines(
                        day.files.map { ($0, position?.offsets[$0.description] ?? 0) }, in: directory,
                        chunk: tailChunk, unterminated: false)
                    try merged.forEach { line, _ in
                        if let parsed = LedgerLine(parsing: Substring(String(decoding: line, as: UTF8.self))) {
                            visit(parsed)
                        }
                    }
                    ends = merged.ends
                } catch {
                    throw SpoolError(error)
                }
            }
            guard day.day >= kept else { continue }
            for (name, offset) in ends { offsets[name.description] = offset }
        }
        return LedgerPosition(day: kept, offsets: offsets)
    }

    /// One file's whole lines from `offset` on, and the byte after the last.
    private static func readNew(
        _ name: FileName, from start: Int, in directory: DirectoryHandle, _ visit: (LedgerLine) -> Void
    ) throws(SpoolError) -> [(name: FileName, offset: Int)] {
        do {
            let file = try directory.openFile(name, flags: O_RDONLY)
            var offset = start
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
            return [(name, offset)]
        } catch let error where error.errno == .noSuchFile {
            return []  // pruned while we listed
        } catch {
            throw SpoolError(error)
        }
    }

    /// The UTC day before `day` (`YYYY-MM-DD`).
    static func dayBefore(_ day: String) -> String {
        guard let start = Timestamp(dateOrTime: day) else { return day }
        return (start - .seconds(86_400)).utcDay
    }
}
