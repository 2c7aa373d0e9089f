import Glibc

/// A table written as its rows come, for `list` over a million entries and
/// `log --follow`, which must not wait for the last row: in a pipe each
/// row goes out tab-separated at once; on a terminal rows are aligned a
/// block at a time, with column widths that only grow, so a later block
/// never draws narrower than an earlier one.
struct TableWriter {
    let output: Output
    /// Printed before the first row on a terminal (none in a pipe, where
    /// awk and cut read the rows).
    let header: [String]?
    private var pending: [[String]] = []
    private var widths: [Int] = []
    private var started = false

    /// Rows aligned together on a terminal: a screenful and more.
    static let block = 256

    init(_ output: Output, header: [String]? = nil) {
        self.output = output
        self.header = header
    }

    mutating func add(_ row: [String]) {
        // One field of one line each (`PrintableText`).
        let row = row.map(PrintableText.of)
        if !started {
            started = true
            if output.isTerminal, let header { pending.append(header) }
        }
        guard output.isTerminal else { return output.line(row.joined(separator: "\t")) }
        pending.append(row)
        if pending.count >= Self.block { drain() }
    }

    /// Writes what is pending and flushes standard output; false once the
    /// reader is gone (`| head` closed the pipe), so a follow can stop.
    @discardableResult
    mutating func flush() -> Bool {
        drain()
        // fflush(nil): every stream, since stdout itself is shared mutable
        // state to Swift 6; stderr is unbuffered, so it is stdout that counts.
        return fflush(nil) == 0
    }

    private mutating func drain() {
        for row in pending {
            if widths.count < row.count { widths += [Int](repeating: 0, count: row.count - widths.count) }
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        for row in pending {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }
            output.line(cells.joined(separator: "  "))
        }
        pending.removeAll(keepingCapacity: true)
    }
}
