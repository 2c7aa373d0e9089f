import CourierSupport

/// The `.courier/catalog-NAME.seen` format: the ids a full sync has applied,
/// which decide what it removes at the end. A header line, then one id per
/// line as `LENGTH:ID`, the id percent-encoded (every byte outside
/// `[A-Za-z0-9._:-]`, `%` included, as `%XX`) and LENGTH the encoded
/// length: no byte of an id can end its line early or make two ids of one,
/// and a line torn by a crash mid-append fails its length and is not read
/// as a shorter id. (The torn append's page is still in the journal, and
/// its replay appends every id of it again.)
enum SeenIDs {
    /// The first line. Files without it were written one raw id per line
    /// by earlier versions of courier, where an id with a newline read as two;
    /// a full sync that finds one starts over.
    static let header = Array("courier-catalog-seen 2\n".utf8)

    /// The bytes to append to a file of `size` bytes whose last byte is
    /// `last`: the header when the file is new, a newline first when a torn
    /// append left a line without one, then a line per id.
    static func appendix(_ ids: [String], toFileOf size: Int, endingWith last: UInt8?) -> [UInt8] {
        var bytes: [UInt8] = []
        if size == 0 {
            bytes = header
        } else if last != newline {
            bytes.append(newline)
        }
        for id in ids { bytes += line(id) }
        return bytes
    }

    static func line(_ id: String) -> [UInt8] {
        let encoded = encode(id)
        return Array("\(encoded.count):".utf8) + encoded + [newline]
    }

    /// The ids in a file, or nil when it is not in this format (an older
    /// courier's): it cannot say which of its lines are whole ids.
    static func decode(_ bytes: [UInt8]) -> Set<String>? {
        guard bytes.starts(with: header) else { return bytes.isEmpty ? [] : nil }
        var ids: Set<String> = []
        for line in bytes.dropFirst(header.count).split(separator: newline) {
            if let id = decodeLine(Array(line)) { ids.insert(id) }
        }
        return ids
    }

    /// Whether the file begins as this format does (empty counts: nothing
    /// seen yet).
    static func isCurrent(_ bytes: [UInt8]) -> Bool { bytes.isEmpty || bytes.starts(with: header) }

    private static func decodeLine(_ line: [UInt8]) -> String? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0, colon <= 7,
            line[..<colon].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let length = Int(String(decoding: line[..<colon], as: UTF8.self)),
            line.count - colon - 1 == length
        else { return nil }
        var decoded: [UInt8] = []
        var index = colon + 1
        while index < line.count {
            let byte = line[index]
            if byte == percent {
                guard index + 2 < line.count, let high = hexValue(line[index + 1]), let low = hexValue(line[index + 2])
                else { return nil }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                guard isPlain(byte) else { return nil }
                decoded.append(byte)
                index += 1
            }
        }
        return String(validating: decoded, as: UTF8.self)
    }

    static func encode(_ id: String) -> [UInt8] {
        var encoded: [UInt8] = []
        for byte in id.utf8 {
            if isPlain(byte) {
                encoded.append(byte)
            } else {
                encoded += [percent, HexDigits.uppercase[Int(byte >> 4)], HexDigits.uppercase[Int(byte & 0x0F)]]
            }
        }
        return encoded
    }

    /// `[A-Za-z0-9._:-]`, the bytes of a record id: written as they are.
    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
            UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static let newline = UInt8(ascii: "\n")
    private static let percent = UInt8(ascii: "%")
}
