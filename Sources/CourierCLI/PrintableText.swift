/// Text for a terminal or a line-oriented reader: one line, nothing a
/// terminal acts on. A producer names its files in queued/ and tmp/ as it
/// likes, and a name with a newline would split a line (or forge a row of
/// `list`, a line of the journal), one with ESC would drive the terminal.
enum PrintableText {
    /// Tab, newline and carriage return as `\t`, `\n`, `\r`; any other C0
    /// or C1 control character, and DEL, as `\xNN`. Unlike the ledger's
    /// escape (`LedgerLine.escape`) a backslash stays one: a log line's
    /// detail, escaped already, is shown once, not twice.
    static func of(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case _ where isControl(scalar):
                let hex = String(scalar.value, radix: 16)
                result += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A file name as `of` writes it.
    static func of(_ name: some CustomStringConvertible) -> String { of(name.description) }

    /// C0, DEL and C1: what a terminal may act on.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
    }
}
