/// `name=value` pairs in a ledger detail, logfmt's shape: what a batch
/// server said of an item (`status=OK server_id=srv-123 etag=v2`), kept so
/// that `courier why` can show it and `awk` can find it. A value with a
/// space, quote, backslash, `=` or control byte is quoted, with `\` and `"`
/// escaped by a backslash; the ledger escapes the line's control bytes.
package enum DetailFields {
    /// The most kept of an id or a tag: room for a SHA-256 in hex.
    package static let valueLimit = 64
    /// What ends a value that was cut short.
    package static let cutMark = "…"

    /// The fields, then `message`, within `limit` bytes. Every value is
    /// redacted before it is cut (a secret straddling a cut must not leave
    /// its first bytes behind); a field is cut to `valueLimit`, the message
    /// to the room that is left. A field that no longer fits is left out,
    /// so the ledger never has to cut the text in the middle of a value.
    package static func format(
        _ fields: [(name: String, value: String)], message: String? = nil, redactor: Redactor,
        limit: Int = DetailLimit.bytes
    ) -> String {
        // Written as bytes, one buffer for the whole detail: a String per
        // separator, pair and quote cost more than a batch item's reading.
        var text: [UInt8] = []
        text.reserveCapacity(96)
        for (name, value) in fields {
            let written = quoted(cut(redactor.redact(value), to: valueLimit))
            let separator = text.isEmpty ? 0 : 1
            guard text.count + separator + name.utf8.count + 1 + written.utf8.count <= limit else {
                return String(decoding: text, as: UTF8.self)
            }
            if separator > 0 { text.append(UInt8(ascii: " ")) }
            text += name.utf8
            text.append(UInt8(ascii: "="))
            text += written.utf8
        }
        if let message {
            let lead = text.isEmpty ? "message=" : " message="
            let room = limit - text.count - lead.utf8.count
            if room > 2 + cutMark.utf8.count {
                text += lead.utf8
                text += quoted(redactor.redact(message), within: room).utf8
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The pairs of a detail written by `format`, in order; parsing stops at
    /// the first word that is not `name=value`.
    package static func parse(_ detail: Substring) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        var rest = detail[...]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "="), rest[..<equals].allSatisfy(isNameCharacter),
                equals > rest.startIndex
            else { break }
            let name = String(rest[..<equals])
            rest = rest[rest.index(after: equals)...]
            let value: String
            if rest.first == "\"" {
                (value, rest) = unquote(rest.dropFirst())
            } else {
                let end = rest.firstIndex(of: " ") ?? rest.endIndex
                value = String(rest[..<end])
                rest = rest[end...]
            }
            pairs.append((name, value))
            rest = rest.drop { $0 == " " }
        }
        return pairs
    }

    private static func isNameCharacter(_ character: Character) -> Bool {
        character == "_" || ("a"..."z").contains(character)
    }

    /// The first `limit` bytes, marked when something was cut.
    package static func cut(_ value: String, to limit: Int) -> String {
        guard value.utf8.count > limit else { return value }
        return value.utf8Prefix(limit - cutMark.utf8.count) + cutMark
    }

    private static func needsQuotes(_ value: String) -> Bool {
        // Through the UTF-8 buffer: the view's iterator cost several times
        // the test.
        value.isEmpty
            || value.withUTF8Bytes {
                $0.contains { $0 <= 0x20 || $0 == 0x7F || $0 == 0x22 || $0 == 0x5C || $0 == 0x3D }
            }
    }

    private static func quoted(_ value: String) -> String {
        quoted(value, within: .max)
    }

    /// The value as written, at most `room` bytes: quoted when it must be,
    /// and cut (with the mark) when the whole of it would not fit.
    private static func quoted(_ value: String, within room: Int) -> String {
        if !needsQuotes(value) && value.utf8.count <= room { return value }
        var body = ""
        var used = 2
        for character in value {
            let escaped = character == "\"" || character == "\\" ? "\\" + String(character) : String(character)
            guard used + escaped.utf8.count <= room else {
                // Cut: take back characters until the mark fits too.
                while used + cutMark.utf8.count > room, let last = body.popLast() {
                    used -= String(last).utf8.count
                    if body.hasSuffix("\\") && (last == "\"" || last == "\\") {
                        body.removeLast()
                        used -= 1
                    }
                }
                return "\"" + body + cutMark + "\""
            }
            body += escaped
            used += escaped.utf8.count
        }
        return "\"" + body + "\""
    }

    /// A quoted value's text and what follows its closing quote; a value
    /// whose closing quote was lost runs to the end.
    private static func unquote(_ text: Substring) -> (String, Substring) {
        var value = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if character == "\"" { return (value, text[index...]) }
            if character == "\\", index < text.endIndex {
                value.append(text[index])
                index = text.index(after: index)
            } else {
                value.append(character)
            }
        }
        return (value, text[text.endIndex...])
    }
}
