/// One pass over a JSON text that checks it (RFC 8259, its UTF-8 included)
/// and notes where the values of its upper levels are, so that a reader
/// finds members and elements without scanning the bytes again: the sink
/// took a batch of 100 records through a full parse only to learn it was
/// an object, then through a scan per member it looked up.
package struct JSONOutline {
    package enum Kind: Sendable, Equatable { case object, array, string, scalar }

    /// One value the pass noted: where its bytes are, and, for a member of
    /// an object, where its name's literal is (quotes included).
    package struct Node: Sendable {
        package let kind: Kind
        package fileprivate(set) var bytes: Range<Int>
        package let name: Range<Int>?
        fileprivate var firstChild: Int?
        fileprivate var nextSibling: Int?
    }

    package let bytes: [UInt8]
    package private(set) var nodes: [Node] = []

    /// Deeper nesting is refused rather than risked, as intake's check does.
    static let maximumDepth = 512

    /// The outline of `bytes` when they are exactly one JSON value in
    /// UTF-8 (whitespace around it allowed); nil otherwise. Values nested
    /// at most `levels` deep are noted (the top value is level 0); deeper
    /// ones are only checked.
    package init?(_ bytes: [UInt8], levels: Int) {
        self.bytes = bytes
        let noted = bytes.withUnsafeBufferPointer { buffer -> [Node]? in
            var scanner = Scanner(bytes: buffer, levels: levels)
            scanner.skipSpace()
            guard scanner.value(depth: 0, name: nil) != nil else { return nil }
            scanner.skipSpace()
            guard scanner.index == buffer.count else { return nil }
            return scanner.nodes
        }
        guard let noted else { return nil }
        nodes = noted
    }

    /// The top value.
    package var root: Int { 0 }

    package func kind(of node: Int) -> Kind { nodes[node].kind }

    /// The value's bytes, exactly as they are in the text.
    package func value(of node: Int) -> [UInt8] { Array(bytes[nodes[node].bytes]) }

    /// The children the pass noted: an object's member values, an array's
    /// elements, in order.
    package func children(of node: Int) -> [Int] {
        var children: [Int] = []
        var next = nodes[node].firstChild
        while let child = next {
            children.append(child)
            next = nodes[child].nextSibling
        }
        return children
    }

    /// An object's members as the pass noted them, in order: where each
    /// name is (inside its quotes, escapes as written) and where its value is.
    package func members(of node: Int) -> [(name: Range<Int>, value: Range<Int>)] {
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        var count = 0
        var next = nodes[node].firstChild
        while let child = next {
            count += 1
            next = nodes[child].nextSibling
        }
        members.reserveCapacity(count)
        next = nodes[node].firstChild
        while let child = next {
            if let literal = nodes[child].name {
                members.append(((literal.lowerBound + 1)..<(literal.upperBound - 1), nodes[child].bytes))
            }
            next = nodes[child].nextSibling
        }
        return members
    }

    /// The value of an object's member `name`, the last one when the name
    /// comes more than once (as a JSON object read into a dictionary
    /// keeps it); names compare byte for byte, as `JSONSplice` does.
    package func member(_ name: String, of node: Int) -> Int? {
        guard nodes[node].kind == .object else { return nil }
        let wanted = Array(name.utf8)
        var found: Int?
        var next = nodes[node].firstChild
        while let child = next {
            if let literal = nodes[child].name,
                bytes[(literal.lowerBound + 1)..<(literal.upperBound - 1)].elementsEqual(wanted)
            {
                found = child
            }
            next = nodes[child].nextSibling
        }
        return found
    }

    /// The text of a string value, escapes decoded; nil for any other value.
    package func string(_ node: Int) -> String? {
        guard nodes[node].kind == .string else { return nil }
        return text(ofString: nodes[node].bytes)
    }

    /// The text of the string literal at `literal` (quotes included), which
    /// the pass checked: one without an escape is its bytes as they are,
    /// already known to be UTF-8, with no copy and no second check.
    package func text(ofString literal: Range<Int>) -> String? {
        let inner = bytes[(literal.lowerBound + 1)..<(literal.upperBound - 1)]
        guard inner.contains(UInt8(ascii: "\\")) else { return String(decoding: inner, as: UTF8.self) }
        return JSONValidator.decodeString(bytes[literal])
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        let levels: Int
        var index = 0
        var nodes: [Node] = []

        init(bytes: UnsafeBufferPointer<UInt8>, levels: Int) {
            self.bytes = bytes
            self.levels = levels
            // A record's top level, noted, in one allocation rather than five.
            nodes.reserveCapacity(16)
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        /// Checks the value at `index`; returns its node (-1 when it is too
        /// deep to be noted), or nil when it is not valid.
        mutating func value(depth: Int, name: Range<Int>?) -> Int? {
            guard let byte = current else { return nil }
            let start = index
            let noted = depth <= levels
            var node = -1
            if noted {
                node = nodes.count
                let kind: Kind
                switch byte {
                case UInt8(ascii: "{"): kind = .object
                case UInt8(ascii: "["): kind = .array
                case UInt8(ascii: "\""): kind = .string
                default: kind = .scalar
                }
                nodes.append(Node(kind: kind, bytes: start..<start, name: name))
            }
            let valid: Bool
            switch byte {
            case UInt8(ascii: "{"): valid = object(depth: depth, node: noted && depth < levels ? node : nil)
            case UInt8(ascii: "["): valid = array(depth: depth, node: noted && depth < levels ? node : nil)
            case UInt8(ascii: "\""): valid = string()
            case UInt8(ascii: "t"): valid = literal("true")
            case UInt8(ascii: "f"): valid = literal("false")
            case UInt8(ascii: "n"): valid = literal("null")
            default: valid = number()
            }
            guard valid else { return nil }
            if noted { nodes[node].bytes = start..<index }
            return node
        }

        /// Links `child` as the next child of `parent` after `previous`.
        mutating func link(_ child: Int, to parent: Int?, after previous: inout Int?) {
            guard let parent, child >= 0 else { return }
            if let previous { nodes[previous].nextSibling = child } else { nodes[parent].firstChild = child }
            previous = child
        }

        mutating func object(depth: Int, node: Int?) -> Bool {
            guard depth < maximumDepth else { return false }
            index += 1
            skipSpace()
            if current == UInt8(ascii: "}") {
                index += 1
                return true
            }
            var previous: Int?
            while true {
                let nameStart = index
                guard current == UInt8(ascii: "\""), string() else { return false }
                let name = nameStart..<index
                skipSpace()
                guard current == UInt8(ascii: ":") else { return false }
                index += 1
                skipSpace()
                guard let child = value(depth: depth + 1, name: name) else { return false }
                link(child, to: node, after: &previous)
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

        mutating func array(depth: Int, node: Int?) -> Bool {
            guard depth < maximumDepth else { return false }
            index += 1
            skipSpace()
            if current == UInt8(ascii: "]") {
                index += 1
                return true
            }
            var previous: Int?
            while true {
                guard let child = value(depth: depth + 1, name: nil) else { return false }
                link(child, to: node, after: &previous)
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

        /// Moves `index` past the string bytes that need no check of their
        /// own (printable ASCII, no `"` and no `\\`), sixteen and then eight
        /// at a time, to the first byte that does, or to the last few bytes
        /// of the text. A block with such a byte moves `index` straight to
        /// it: its plain bytes before it are not looked at again one by one.
        mutating func skipPlainWords() {
            guard let base = bytes.baseAddress else { return }
            let end = bytes.count
            var at = index
            // Three compares a block, one instruction each with SSE2 or NEON:
            // a record's long strings cost about half the word loop's work.
            while at + 16 <= end {
                let block = UnsafeRawPointer(base + at).loadUnaligned(as: SIMD16<Int8>.self)
                // Signed, a control byte and a non-ASCII one are both below a space.
                let special = (block .< Self.spaces) .| (block .== Self.quotes) .| (block .== Self.backslashes)
                if any(special) {
                    // Lane 0 is the block's first byte, the low byte of the
                    // first half read little-endian.
                    let flags = SIMD16<Int8>(repeating: 0).replacing(with: -1, where: special)
                    let (first, second) = unsafeBitCast(flags, to: (UInt64, UInt64).self)
                    let low = UInt64(littleEndian: first), high = UInt64(littleEndian: second)
                    index = at + (low != 0 ? low.trailingZeroBitCount / 8 : 8 + high.trailingZeroBitCount / 8)
                    return
                }
                at += 16
            }
            while at + 8 <= end {
                // Little-endian whatever the host: the word's first byte is its lowest.
                let word = UInt64(littleEndian: UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self))
                let found = Self.special(word) & Self.highs
                if found != 0 {
                    // The lowest byte flagged is the first in memory, and
                    // never a false one (see `special`).
                    index = at + found.trailingZeroBitCount / 8
                    return
                }
                at += 8
            }
            index = at
        }

        private static var spaces: SIMD16<Int8> { SIMD16(repeating: 0x20) }
        private static var quotes: SIMD16<Int8> { SIMD16(repeating: 0x22) }
        private static var backslashes: SIMD16<Int8> { SIMD16(repeating: 0x5C) }
        private static var ones: UInt64 { 0x0101_0101_0101_0101 }
        private static var highs: UInt64 { 0x8080_8080_8080_8080 }

        /// A high bit set in each byte of `word` (its first byte lowest)
        /// that is a control, a non-ASCII byte, `"` or `\\`. A
        /// byte of a word is zero (after the XOR: is that byte) when the
        /// classic test sets its high bit. The test's borrow can set the
        /// bit of a byte above one it found too, never below: the lowest
        /// bit set is a byte that is special.
        @inline(__always)
        static func special(_ word: UInt64) -> UInt64 {
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            return word | ((word &- ones &* 0x20) & ~word) | ((quote &- ones) & ~quote)
                | ((backslash &- ones) & ~backslash)
        }

        mutating func string() -> Bool {
            index += 1
            while current != nil {
                // Most of a record's bytes are plain text inside strings:
                // eight at a time while none is a quote, a backslash, a
                // control or non-ASCII byte, each of which the loop checks.
                skipPlainWords()
                guard let byte = current else { return false }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return true
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return false }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        for _ in 0..<4 {
                            guard let hex = current, JSONValidator.hexValue(hex) != nil else { return false }
                            index += 1
                        }
                    default:
                        return false
                    }
                case 0..<0x20:
                    return false
                case 0x80...:
                    guard scalar(startingWith: byte) else { return false }
                default:
                    continue
                }
            }
            return false
        }

        /// The rest of a UTF-8 sequence whose first byte was `lead`
        /// (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
        mutating func scalar(startingWith lead: UInt8) -> Bool {
            let count: Int
            var range: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: count = 1
            case 0xE0:
                count = 2
                range = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: count = 2
            case 0xED:
                count = 2
                range = 0x80...0x9F
            case 0xF0:
                count = 3
                range = 0x90...0xBF
            case 0xF1...0xF3: count = 3
            case 0xF4:
                count = 3
                range = 0x80...0x8F
            default: return false
            }
            for offset in 0..<count {
                guard let byte = current, (offset == 0 ? range : 0x80...0xBF).contains(byte) else { return false }
                index += 1
            }
            return true
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
}
