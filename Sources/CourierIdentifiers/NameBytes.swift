/// The character classes courier's names are made of, each defined once.
/// Every class is a subset of what is safe in a single path component, so
/// no name courier makes or accepts can hold `/`, NUL, a space or a byte
/// that changes meaning in a shell or a ledger column.
package enum NameBytes {
    /// The classes as messages spell them.
    package static let idClass = "[A-Za-z0-9._:-]"
    package static let wordClass = "[A-Za-z0-9_-]"

    /// `[A-Za-z0-9._:-]`: record ids and device ids.
    package static func isID(_ byte: UInt8) -> Bool {
        isWord(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
    }

    /// `[A-Za-z0-9_-]`: subscriber, catalog and kind names; no `.` or `:`,
    /// so `KEY@NAME.json` always parses back.
    package static func isWord(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// `[A-Za-z0-9._-]`: what is kept of a dropped file's name when it is
    /// flagged (`:` is left out, as some tools read it as a host name).
    package static func isSafeFileName(_ byte: UInt8) -> Bool {
        isWord(byte) || byte == UInt8(ascii: ".")
    }

    /// 1–64 word bytes: a subscriber, catalog or kind name.
    package static func isWord(_ text: String) -> Bool {
        wordLength.contains(text.utf8.count) && text.utf8.allSatisfy(isWord)
    }

    /// The same rule for bytes where they are (a kind written without
    /// escapes, in its record). Not generic: across modules a generic one
    /// walked the bytes through witness tables, at 4 k instructions a kind.
    package static func isWord(bytes: ArraySlice<UInt8>) -> Bool {
        wordLength.contains(bytes.count) && bytes.allSatisfy(isWord)
    }

    private static let wordLength = 1...64

    /// RFC 9110 §5.6.2 `tchar`: header names, on the way out and in.
    package static func isToken(_ byte: UInt8) -> Bool {
        isWord(byte) || Array("!#$%&'*+.^`|~".utf8).contains(byte)
    }
}
