import Foundation

/// Byte-exact edits of a JSON object: the body POSTed is the entry's bytes
/// exactly, so attaching a route must not re-serialise (and so reorder or
/// reformat) anything else in the record.
package enum JSONSplice {
    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    private static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    private static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    private static let comma = UInt8(ascii: ","), colon = UInt8(ascii: ":")

    package struct Member {
        package let name: [UInt8]
        package let value: Range<Int>
    }

    /// `workout` with `data.route` set to the JSON value `route`; nil when
    /// `data` exists but is not an object. `data` is created if missing.
    package static func settingRoute(_ route: [UInt8], in workout: [UInt8]) -> [UInt8]? {
        guard let top = object(at: skipSpace(workout, 0), in: workout) else { return nil }
        var result = workout
        if let data = top.members.last(where: { $0.name == Array("data".utf8) }) {
            guard let inner = object(at: data.value.lowerBound, in: workout) else { return nil }
            if let existing = inner.members.last(where: { $0.name == Array("route".utf8) }) {
                result.replaceSubrange(existing.value, with: route)
            } else {
                let member = Array(#""route":"#.utf8) + route
                result.insert(contentsOf: (inner.members.isEmpty ? [] : [comma]) + member, at: inner.close)
            }
        } else {
            let member = Array(#""data":{"route":"#.utf8) + route + [closeBrace]
            result.insert(contentsOf: (top.members.isEmpty ? [] : [comma]) + member, at: top.close)
        }
        // The edit must leave valid JSON; anything else is refused.
        guard (try? JSONSerialization.jsonObject(with: Data(result))) is [String: Any] else { return nil }
        return result
    }

    /// The bytes of a top-level member's value, if there is one.
    package static func value(of name: String, in bytes: [UInt8]) -> [UInt8]? {
        guard let top = object(at: skipSpace(bytes, 0), in: bytes),
            let member = top.members.last(where: { $0.name == Array(name.utf8) })
        else { return nil }
        return Array(bytes[member.value])
    }

    /// The members of the object starting at `start`, and the index of its
    /// closing brace. The input has been validated as JSON already.
    package static func object(at start: Int, in bytes: [UInt8]) -> (members: [Member], close: Int)? {
        guard start < bytes.count, bytes[start] == openBrace else { return nil }
        var members: [Member] = []
        var index = skipSpace(bytes, start + 1)
        if index < bytes.count && bytes[index] == closeBrace { return (members, index) }
        while index < bytes.count {
            guard bytes[index] == quote, let nameEnd = endOfString(bytes, index) else { return nil }
            let name = Array(bytes[(index + 1)..<(nameEnd - 1)])
            index = skipSpace(bytes, nameEnd)
            guard index < bytes.count, bytes[index] == colon else { return nil }
            let valueStart = skipSpace(bytes, index + 1)
            guard let valueEnd = endOfValue(bytes, valueStart) else { return nil }
            members.append(Member(name: name, value: valueStart..<valueEnd))
            index = skipSpace(bytes, valueEnd)
            guard index < bytes.count else { return nil }
            if bytes[index] == closeBrace { return (members, index) }
            guard bytes[index] == comma else { return nil }
            index = skipSpace(bytes, index + 1)
        }
        return nil
    }

    /// The elements of a JSON array, as bytes.
    package static func arrayElements(_ bytes: [UInt8]) -> [[UInt8]] {
        var elements: [[UInt8]] = []
        var index = skipSpace(bytes, 0)
        guard index < bytes.count, bytes[index] == openBracket else { return [] }
        index = skipSpace(bytes, index + 1)
        while index < bytes.count, bytes[index] != closeBracket {
            guard let end = endOfValue(bytes, index) else { return elements }
            elements.append(Array(bytes[index..<end]))
            index = skipSpace(bytes, end)
            if index < bytes.count, bytes[index] == comma { index = skipSpace(bytes, index + 1) }
        }
        return elements
    }

    /// JSON's whitespace (RFC 8259 §2).
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func skipSpace(_ bytes: [UInt8], _ start: Int) -> Int {
        var index = start
        while index < bytes.count, isSpace(bytes[index]) { index += 1 }
        return index
    }

    /// The index just past the string starting at `start`.
    private static func endOfString(_ bytes: [UInt8], _ start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count {
            if bytes[index] == backslash {
                index += 2
            } else if bytes[index] == quote {
                return index + 1
            } else {
                index += 1
            }
        }
        return nil
    }

    /// The index just past the value starting at `start`.
    private static func endOfValue(_ bytes: [UInt8], _ start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case quote:
            return endOfString(bytes, start)
        case openBrace, openBracket:
            var depth = 0
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case quote:
                    guard let end = endOfString(bytes, index) else { return nil }
                    index = end
                    continue
                case openBrace, openBracket:
                    depth += 1
                case closeBrace, closeBracket:
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default:
                    break
                }
                index += 1
            }
            return nil
        default:
            var index = start
            while index < bytes.count,
                bytes[index] != comma && bytes[index] != closeBrace && bytes[index] != closeBracket
                    && !isSpace(bytes[index])
            {
                index += 1
            }
            return index
        }
    }
}
