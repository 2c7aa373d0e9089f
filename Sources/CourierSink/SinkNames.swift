import CourierPosix
import CourierSupport
import Glibc

// The names the sink takes from requests, by its own reading of the
// documents (docs/design.md §1 "Entry names", docs/sink.md) and not by
// courier's validators: the reference receiver is the oracle courier's
// tests are judged by, so a mistake in courier's rules must show as a
// disagreement with it, not be shared by it.

/// An `Idempotency-Key` (or a batch item's `idempotency_key`) the sink
/// stores a record under, as `new/KEY.json`: an id, or `ID#N` with N from
/// 2 to 999999 and no leading zero (a deliberate copy).
struct IdempotencyKey: Hashable, Sendable, CustomStringConvertible {
    let text: String

    init?(_ text: String) {
        var id = Substring(text)
        if let hash = text.firstIndex(of: "#") {
            id = text[..<hash]
            let copy = text[text.index(after: hash)...]
            guard (1...6).contains(copy.utf8.count), copy.utf8.allSatisfy(SinkBytes.isDigit),
                copy.utf8.first != UInt8(ascii: "0"), let number = Int(copy), number >= 2
            else { return nil }
        }
        guard EntityID.isID(id.utf8) else { return nil }
        self.text = text
    }

    var description: String { text }
}

/// An id as records give them (`id`, `entity_id`, `updates`, a batch
/// item's `client_id`, a catalog item's file name): 1–128 bytes of
/// `[A-Za-z0-9._:-]`, not starting with `.`.
struct EntityID: Hashable, Sendable, CustomStringConvertible {
    let text: String

    init?(_ text: String) {
        guard Self.isID(text.utf8) else { return nil }
        self.text = text
    }

    var description: String { text }

    static func isID(_ bytes: some Collection<UInt8>) -> Bool {
        (1...128).contains(bytes.count) && bytes.first != UInt8(ascii: ".")
            && bytes.allSatisfy { SinkBytes.isWord($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":") }
    }
}

/// The byte classes the sink's checks are made of.
enum SinkBytes {
    static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// `[A-Za-z0-9_-]`.
    static func isWord(_ byte: UInt8) -> Bool {
        isDigit(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "-")
    }

    /// A catalog's name in `/catalogs/NAME/delta`: 1–64 of `[A-Za-z0-9_-]`,
    /// as `[catalog NAME]` allows.
    static func isCatalogName(_ text: Substring) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy(isWord)
    }

    /// RFC 9110 §5.6.2 `tchar`, what a header name is made of.
    static func isToken(_ byte: UInt8) -> Bool {
        isWord(byte) || Array("!#$%&'*+.^`|~".utf8).contains(byte)
    }

    /// A field of the sink's own TSV files (`--log`, `acks.tsv`) on one
    /// line: tab, newline, carriage return and backslash as `\t \n \r \\`,
    /// other control bytes as `\xHH`, so `cut` and `awk` split them as the
    /// ledger's.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                result += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// Names for files being written in `tmp/`, `TIME.PID_N.NAME` as maildir's:
/// the PID and the counter keep apart the writers of one process and of
/// several sinks on one folder.
struct SinkStagingNames {
    private var counter = 0

    mutating func next(for name: FileName) -> FileName {
        counter += 1
        let prefix = Array("\(Timestamp.now().compact).\(getpid())_\(counter).".utf8)
        // 255 bytes is the longest name a file system takes.
        return FileName(bytes: prefix + name.bytes.prefix(min(160, 255 - prefix.count)))
    }
}
