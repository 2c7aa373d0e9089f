import Foundation
import Glibc

/// Standard output and error. Output is plain text: no colour, and when
/// stdout is not a terminal, tables are tab-separated for awk and cut.
struct Output {
    let isTerminal = isatty(STDOUT_FILENO) == 1
    /// Standard error is the journal: errors carry the `<3>` priority.
    var journal = false

    func line(_ text: String = "") {
        print(text)
    }

    /// Text without a newline: a JSON array written an element at a time.
    func write(_ text: String) {
        print(text, terminator: "")
    }

    /// One line, whatever words it names: a usage error repeats the word
    /// it refuses, and one with ESC would drive the terminal, one with a
    /// newline forge a second line of the journal (`PrintableText`).
    func error(_ text: String) {
        fflush(nil)
        let prefix = journal ? (text.hasPrefix("fatal:") ? "<3>" : "<4>") : "courier: "
        FileHandle.standardError.write(Data("\(prefix)\(PrintableText.of(text))\n".utf8))
    }

    /// Text on standard error as it is, without `courier: ` before it: the
    /// usage printed when no command is given.
    func errorText(_ text: String) {
        fflush(nil)
        FileHandle.standardError.write(Data("\(text)\n".utf8))
    }

    /// One JSON value on one line, keys sorted and slashes unescaped, so
    /// scripts and people read the same text (`jq`, `grep "sent/"`). Each
    /// shape is a type of its own (JSON/), listed in courier(1).
    func json(_ value: some Encodable) {
        guard let text = Self.jsonText(value) else {
            error("unable to encode the output as JSON")
            return
        }
        print(text)
    }

    /// The same JSON as a string, for JSON Lines written a line at a time.
    static func jsonText(_ value: some Encodable) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Rows as aligned columns on a terminal, tab-separated in a pipe.
    func table(_ rows: [[String]]) {
        let rows = rows.map { $0.map(PrintableText.of) }
        guard isTerminal else {
            for row in rows { print(row.joined(separator: "\t")) }
            return
        }
        guard let columns = rows.map(\.count).max() else { return }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }
            print(cells.joined(separator: "  "))
        }
    }
}
