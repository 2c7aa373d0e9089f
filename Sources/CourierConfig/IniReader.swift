import CINIH

/// One `key = value` as libinih reported it, with the line it came from.
struct IniEntry: Sendable {
    let section: String
    let key: String
    let value: String
    let line: Int
}

/// Runs libinih over bytes that courier read itself, so every entry carries
/// its line number (the packaged libinih is built without
/// INI_HANDLER_LINENO) and a too-long line is an error, not a silent split.
enum IniReader {
    private final class State {
        let lines: [[UInt8]]
        var next = 0
        var entries: [IniEntry] = []
        var tooLongLine: Int?
        var invalidText: Int?

        init(_ lines: [[UInt8]]) { self.lines = lines }
    }

    /// A `[section]` header and its line: libinih reports keys only, and a
    /// section given twice must be refused, not merged.
    struct SectionHeader {
        let name: String
        let line: Int
    }

    static func sectionHeaders(_ bytes: [UInt8]) -> [SectionHeader] {
        var headers: [SectionHeader] = []
        for (index, line) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            // As libinih reads it: leading blanks, `[`, the name up to `]`.
            guard let open = line.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }), line[open] == UInt8(ascii: "["),
                let close = line[open...].firstIndex(of: UInt8(ascii: "]"))
            else { continue }
            let name = String(decoding: line[(open + 1)..<close], as: UTF8.self).trimmingSpaces
            headers.append(SectionHeader(name: name, line: index + 1))
        }
        return headers
    }

    static func parse(_ bytes: [UInt8], file: String) throws(ConfigError) -> [IniEntry] {
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        for byte in bytes {
            current.append(byte)
            if byte == UInt8(ascii: "\n") {
                lines.append(current)
                current = []
            }
        }
        if !current.isEmpty { lines.append(current + [UInt8(ascii: "\n")]) }
        let state = State(lines)
        let pointer = Unmanaged.passUnretained(state).toOpaque()
        let reader: ini_reader = { buffer, size, stream in
            guard let buffer, let stream else { return nil }
            let state = Unmanaged<State>.fromOpaque(stream).takeUnretainedValue()
            guard state.next < state.lines.count else { return nil }
            let line = state.lines[state.next]
            state.next += 1
            if line.contains(0) || String(validating: line, as: UTF8.self) == nil {
                state.invalidText = state.invalidText ?? state.next
            }
            let room = Int(size) - 1
            if line.count > room { state.tooLongLine = state.tooLongLine ?? state.next }
            let count = min(line.count, room)
            line.withUnsafeBufferPointer { source in
                buffer.withMemoryRebound(to: UInt8.self, capacity: Int(size)) { target in
                    if let base = source.baseAddress { target.update(from: base, count: count) }
                    target[count] = 0
                }
            }
            return buffer
        }
        let handler: ini_handler = { user, section, name, value in
            guard let user, let section, let name, let value else { return 0 }
            let state = Unmanaged<State>.fromOpaque(user).takeUnretainedValue()
            state.entries.append(
                IniEntry(
                    section: String(cString: section), key: String(cString: name), value: String(cString: value),
                    line: state.next))
            return 1
        }
        let result = withExtendedLifetime(state) { ini_parse_stream(reader, pointer, handler, pointer) }
        if let line = state.invalidText {
            throw .syntax(file: file, line: line, reason: "not UTF-8 text")
        }
        if let line = state.tooLongLine {
            throw .syntax(file: file, line: line, reason: "line is too long for the INI reader (at most 198 bytes)")
        }
        if result < 0 {
            throw .syntax(file: file, line: 0, reason: "the INI reader could not allocate memory")
        }
        if result > 0 {
            throw .syntax(file: file, line: Int(result), reason: "not `[section]`, `key = value` or a comment")
        }
        return state.entries
    }
}
