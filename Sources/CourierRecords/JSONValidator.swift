import CourierSupport

/// A strict RFC 8259 well-formedness check over bytes, and JSON string
/// decoding: intake reads every record, and Foundation's parser built a
/// whole object graph for the five fields courier looks at.
package enum JSONValidator {
    /// Deeper nesting is refused rather than risked.
    static let maximumDepth = 512

    /// True when `bytes` is exactly one JSON value (whitespace around it
    /// allowed) and valid UTF-8 is the caller's check.
    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            scanner.skipSpace()
            guard scanner.value(depth: 0) else { return false }
            scanner.skipSpace()
            return scanner.index == buffer.count
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func value(depth: Int) -> Bool {
            guard let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return object(depth: depth + 1)
            case UInt8(ascii: "["): return array(depth: depth + 1)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func object(depth: Int) -> Bool {
            guard depth <= maximumDepth else { return false }
            index += 1
            skipSpace()
            if current == UInt8(ascii: "}") {
                index += 1
                return true
            }
            while true {
                guard current == UInt8(ascii: "\""), string() else { return false }
                skipSpace()
                guard current == UInt8(ascii: ":") else { return false }
                index += 1
                skipSpace()
                guard value(depth: depth) else { return false }
                skipSpace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                    skipSpace()
                case UInt8(ascii: "}"):
                    index += 1
                    return true
                default:
                    return false
                }
            }
        }

        mutating func array(depth: Int) -> Bool {
            guard depth <= maximumDepth else { return false }
            index += 1
            skipSpace()
            if current == UInt8(ascii: "]") {
                index += 1
                return true
            }
            while true {
                guard value(depth: depth) else { return false }
                skipSpace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                    skipSpace()
                case UInt8(ascii: "]"):
                    index += 1
                    return true
                default:
                    return false
                }
            }
        }

        mutating func string() -> Bool {
            index += 1
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return true
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return false }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        for _ in 0..<4 {
                            guard let hex = current, hexValue(hex) != nil else { return false }
                            index += 1
                        }
                    default:
                        return false
                    }
                case 0..<0x20:
                    return false
                default:
                    continue
                }
            }
            return false
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func number() -> Bool {
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, isDigit(first) else { return false }
            index += 1
            if first != UInt8(ascii: "0") { while let byte = current, isDigit(byte) { index += 1 } }
            if current == UInt8(ascii: ".") {
                index += 1
                guard let byte = current, isDigit(byte) else { return false }
                while let byte = current, isDigit(byte) { index += 1 }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let byte = current, isDigit(byte) else { return false }
                while let byte = current, isDigit(byte) { index += 1 }
            }
            return true
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    }

    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// A JSON string literal for `text`: quote, backslash and control
    /// characters escaped.
    package static func encodeString(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encodedCount(text))
        appendString(text, to: &bytes)
        return bytes
    }

    /// `encodeString(text)` appended to `bytes`, with no array of its own:
    /// a batch body is written item by item this way. Over the UTF-8 buffer,
    /// the runs between escapes copied whole: every byte below 0x20 is a
    /// control character, since no byte of a longer sequence is.
    package static func appendString(_ text: String, to bytes: inout [UInt8]) {
        text.withUTF8Bytes { utf8 in
            bytes.append(quote)
            var run = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte == quote || byte == backslash || byte < 0x20 else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
                run = index + 1
                if byte < 0x20 {
                    bytes.append(contentsOf: [backslash, UInt8(ascii: "u"), zero, zero])
                    bytes.append(HexDigits.lowercase[Int(byte >> 4)])
                    bytes.append(HexDigits.lowercase[Int(byte & 0x0F)])
                } else {
                    bytes.append(backslash)
                    bytes.append(byte)
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
            bytes.append(quote)
        }
    }

    /// `encodeString(text).count`, without building it.
    package static func encodedCount(_ text: String) -> Int {
        text.withUTF8Bytes { utf8 in
            var count = 2 + utf8.count
            for byte in utf8 where byte == quote || byte == backslash || byte < 0x20 {
                count += byte < 0x20 ? 5 : 1
            }
            return count
        }
    }

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), zero = UInt8(ascii: "0")
    /// `\u` escapes are written in lower case, as `String(_:radix:)` writes them.

    /// The text of a JSON string literal (quotes included in `literal`), with
    /// every escape decoded; nil when it is not a valid string literal.
    package static func decodeString(_ literal: [UInt8]) -> String? { decodeString(literal[...]) }

    /// The bytes between a string literal's quotes when it has no escape:
    /// its text as written, to read in place. Nil otherwise (decode it).
    package static func plainContents(_ literal: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let quote = UInt8(ascii: "\"")
        guard literal.count >= 2, literal.first == quote, literal.last == quote else { return nil }
        let inner = literal.dropFirst().dropLast()
        return inner.contains(UInt8(ascii: "\\")) ? nil : inner
    }

    /// The same for a literal in place in a record's bytes (no copy of it).
    package static func decodeString(_ literal: ArraySlice<UInt8>) -> String? {
        if let plain = plainContents(literal) { return String(validating: plain, as: UTF8.self) }
        guard literal.count >= 2, literal.first == UInt8(ascii: "\""), literal.last == UInt8(ascii: "\"") else {
            return nil
        }
        let inner = literal.dropFirst().dropLast()
        var bytes: [UInt8] = []
        var iterator = inner.makeIterator()
        func hex4() -> UInt32? {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = iterator.next(), let digit = hexValue(byte) else { return nil }
                value = value * 16 + digit
            }
            return value
        }
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                continue
            }
            guard let escaped = iterator.next() else { return nil }
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escaped)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4() else { return nil }
                if (0xD800...0xDBFF).contains(scalar) {
                    guard iterator.next() == UInt8(ascii: "\\"), iterator.next() == UInt8(ascii: "u"), let low = hex4(),
                        (0xDC00...0xDFFF).contains(low)
                    else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let decoded = Unicode.Scalar(scalar) else { return nil }
                bytes += Array(String(decoded).utf8)
            default:
                return nil
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
