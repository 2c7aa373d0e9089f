import Foundation

/// A man page's sections and tagged paragraphs as plain text: enough to
/// compare courier(1) with the command table.
struct ManPage {
    /// `.TP` paragraphs of one section: the tag line, and the whole
    /// paragraph, both as plain text.
    struct Entry {
        let tag: String
        let text: String
    }

    let source: String

    /// The lines of section `name` (from `.SH NAME` to the next `.SH`).
    func section(_ name: String) -> [Substring] {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == ".SH \(name)" || $0 == ".SH \"\(name)\"" }) else {
            return []
        }
        let rest = lines[(start + 1)...]
        return Array(rest.prefix { !$0.hasPrefix(".SH ") })
    }

    func entries(in name: String) -> [Entry] {
        var entries: [Entry] = []
        // The current `.TP` paragraph; nil outside one (before the first,
        // or after a `.PP`).
        var lines: [Substring]?
        func finish() {
            guard let tag = lines?.first else { return }
            entries.append(Entry(tag: Self.plain(tag), text: (lines ?? []).map(Self.plain).joined(separator: " ")))
        }
        for line in section(name) {
            if line == ".TP" || line == ".PP" {
                finish()
                lines = line == ".TP" ? [] : nil
            } else {
                lines?.append(line)
            }
        }
        finish()
        return entries
    }

    /// One line of roff as it reads: font macros and escapes gone, the
    /// alternating macros' arguments joined as roff joins them.
    static func plain(_ line: Substring) -> String {
        var text = String(line)
        if text.hasPrefix(".") {
            let macro = text.prefix { $0 != " " }
            let arguments = words(String(text.dropFirst(macro.count)))
            let alternating = ["BR", "BI", "IR", "RB", "IB", "RI"].contains(macro.dropFirst())
            text = arguments.joined(separator: alternating ? "" : " ")
        }
        for (escape, replacement) in [
            (#"\fB"#, ""), (#"\fI"#, ""), (#"\fR"#, ""), (#"\fP"#, ""), (#"\-"#, "-"), (#"\(->"#, "->"),
            (#"\(em"#, "—"), (#"\(rs"#, "\\"), (#"\e"#, "\\"),
        ] {
            text = text.replacingOccurrences(of: escape, with: replacement)
        }
        return text
    }

    /// Macro arguments: split at spaces, except inside double quotes.
    private static func words(_ text: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        var started = false
        for character in text {
            if character == "\"" {
                quoted.toggle()
                started = true
            } else if character == " " && !quoted {
                if started { words.append(current) }
                current = ""
                started = false
            } else {
                current.append(character)
                started = true
            }
        }
        if started { words.append(current) }
        return words
    }
}
