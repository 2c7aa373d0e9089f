/// One of several courier workers sharing a spool: its name is in the
/// name of the ledger file it appends to, `YYYY-MM-DD.WORKER.tsv`, because
/// `O_APPEND` is not atomic across the clients of a network file system
/// (NFS, GlusterFS), so no two hosts may append to one file. 1–64 of
/// `[A-Za-z0-9._-]`, not starting with `.` (a hidden file is no ledger).
package struct WorkerID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let value: String

    package static let maximumLength = 64

    package init(_ value: String) throws(WorkerIDError) {
        if let problem = Self.problem(with: value) { throw WorkerIDError(text: value, problem: problem) }
        self.value = value
    }

    /// Why `value` is not a worker id, in words for a message; nil when it is one.
    package static func problem(with value: String) -> String? {
        let bytes = value.utf8
        if bytes.isEmpty { return "it is empty" }
        if bytes.count > maximumLength { return "it is \(bytes.count) bytes long (at most \(maximumLength))" }
        if bytes.first == UInt8(ascii: ".") { return "it starts with '.'" }
        if let bad = bytes.first(where: { !NameBytes.isSafeFileName($0) }) {
            return "it contains a byte that is not [A-Za-z0-9._-] (0x\(String(bad, radix: 16)))"
        }
        return nil
    }

    package var description: String { value }

    /// Byte order: the bytes are ASCII.
    package static func < (lhs: WorkerID, rhs: WorkerID) -> Bool { lhs.value < rhs.value }
}

/// A worker id refused, with the text as given and why.
package struct WorkerIDError: Error, Sendable, Equatable, CustomStringConvertible {
    package let text: String
    package let problem: String

    package var description: String {
        // Escaped as Swift escapes a string literal: a newline or a control
        // byte in a configuration value must not break the message's one line.
        let shown = text.prefix(100).unicodeScalars.map { $0.escaped(asASCII: false) }.joined()
        return "`\(shown)` is not a worker id: \(problem)"
    }
}
