import CourierPosix
import Glibc

extension Ledger {
    /// The well-formed lines of one day file, in file order; with `needle`,
    /// only the lines that contain it. `why KEY` and `log --key` over months
    /// of ledger look for a few lines among millions: a byte search finds those at
    /// memory speed, and only they are parsed (a line is a few hundred
    /// nanoseconds to parse, the search a fraction of that per line).
    /// Returns how many of the lines it looked at were malformed. A file
    /// pruned meanwhile has no lines.
    package static func readDay(
        _ name: FileName, in directory: DirectoryHandle, containing needle: String? = nil,
        _ visit: (LedgerLine) -> Void
    ) throws(SpoolError) -> Int {
        let bytes: [UInt8]
        do {
            // As long as it is now: lines written meanwhile are the next
            // reader's, and one cut in half is passed over like a torn one.
            // pread into one buffer of that size, not a growing array.
            let file = try directory.openFile(name, flags: O_RDONLY)
            bytes = try file.read(from: 0, upTo: file.status().size)
        } catch let error where error.errno == .noSuchFile {
            return 0
        } catch {
            throw SpoolError(error)
        }
        let pattern = Array((needle ?? "").utf8)
        var malformed = 0
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            while start < buffer.count {
                var lineStart = start
                if !pattern.isEmpty {
                    guard let hit = find(pattern, in: buffer, from: start) else { break }
                    // Back to the start of the line the hit is in.
                    lineStart = hit
                    while lineStart > start, buffer[lineStart - 1] != 0x0A { lineStart -= 1 }
                }
                let newline = memchr(base + lineStart, 0x0A, buffer.count - lineStart)
                let lineEnd = newline.map { UnsafeRawPointer(base).distance(to: $0) } ?? buffer.count
                start = lineEnd + 1
                guard lineEnd > lineStart else { continue }
                let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd]), as: UTF8.self)
                if let parsed = LedgerLine(parsing: Substring(text)) {
                    visit(parsed)
                } else if newline != nil {
                    // A last line without its newline is still being
                    // written, or was torn by a crash: not counted.
                    malformed += 1
                }
            }
        }
        return malformed
    }

    /// The well-formed lines of one day's files, merged by time (see
    /// `MergedLines`); with `needle`, only the lines that contain it. One
    /// file is read as `readDay` reads it, at no cost of merging. Returns
    /// how many of the lines it looked at were malformed.
    package static func readDay(
        _ names: [FileName], in directory: DirectoryHandle, containing needle: String? = nil,
        _ visit: (LedgerLine) -> Void
    ) throws(SpoolError) -> Int {
        guard names.count > 1 else {
            guard let name = names.first else { return 0 }
            return try readDay(name, in: directory, containing: needle, visit)
        }
        let pattern = Array((needle ?? "").utf8)
        var malformed = 0
        do {
            var merged = try MergedLines(names.map { ($0, 0) }, in: directory, chunk: tailChunk, unterminated: true)
            try merged.forEach { line, whole in
                guard !line.isEmpty, pattern.isEmpty || find(pattern, in: line, from: 0) != nil else { return }
                if let parsed = LedgerLine(parsing: Substring(String(decoding: line, as: UTF8.self))) {
                    visit(parsed)
                } else if whole {
                    malformed += 1
                }
            }
        } catch {
            throw SpoolError(error)
        }
        return malformed
    }

    /// Where `pattern` first occurs in `buffer` at or after `start`. memchr
    /// looks for its second byte (the first is mostly a tab, of which every
    /// line has eight), memcmp the rest: glibc's memmem is a GNU
    /// extension the Glibc module does not show.
    private static func find(_ pattern: [UInt8], in buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = buffer.baseAddress else { return nil }
        let anchor = pattern.count > 1 ? 1 : 0
        var from = start + anchor
        while from < buffer.count {
            guard let found = memchr(base + from, Int32(pattern[anchor]), buffer.count - from) else { return nil }
            let candidate = UnsafeRawPointer(base).distance(to: found) - anchor
            if candidate + pattern.count <= buffer.count,
                pattern.withUnsafeBytes({ needle in
                    needle.baseAddress.map { memcmp(base + candidate, $0, needle.count) == 0 } ?? false
                })
            {
                return candidate
            }
            from = candidate + anchor + 1
        }
        return nil
    }
}
