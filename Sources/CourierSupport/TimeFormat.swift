import CourierPosix
import Glibc

extension Timestamp {
    private var brokenDown: tm {
        var seconds = time_t(secondsSinceEpoch)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return parts
    }

    private static func pad(_ value: Int32, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// `2026-11-30`: the ledger's day file name.
    package var utcDay: String {
        let t = brokenDown
        return "\(Self.pad(t.tm_year + 1900, 4))-\(Self.pad(t.tm_mon + 1, 2))-\(Self.pad(t.tm_mday, 2))"
    }

    /// `2026-11-30T07:00:00.123Z`: RFC 3339, UTC, milliseconds.
    package var rfc3339: String {
        let t = brokenDown
        let millis = Int32(nanosecondOfSecond / 1_000_000)
        return
            "\(utcDay)T\(Self.pad(t.tm_hour, 2)):\(Self.pad(t.tm_min, 2)):\(Self.pad(t.tm_sec, 2)).\(Self.pad(millis, 3))Z"
    }

    /// `20261130T070000Z`: sortable and safe in file names.
    package var compact: String {
        let t = brokenDown
        return "\(Self.pad(t.tm_year + 1900, 4))\(Self.pad(t.tm_mon + 1, 2))\(Self.pad(t.tm_mday, 2))T"
            + "\(Self.pad(t.tm_hour, 2))\(Self.pad(t.tm_min, 2))\(Self.pad(t.tm_sec, 2))Z"
    }

    /// Parses RFC 3339 (`2026-11-30T07:00:00Z`, `…T07:00:00.5+01:00`);
    /// nil for anything else, including impossible dates. Read in place:
    /// intake parses one per record.
    package init?(rfc3339 text: String) {
        guard let time = Self.read(text, Self.rfc3339) else { return nil }
        self = time
    }

    /// The same from UTF-8 bytes in place: a record's `time` without
    /// escapes, read between its quotes.
    package init?(rfc3339 bytes: ArraySlice<UInt8>) {
        guard let time = bytes.withUnsafeBufferPointer(Self.rfc3339) else { return nil }
        self = time
    }

    /// Parses `YYYY-MM-DD` (midnight UTC) or a full RFC 3339 time.
    package init?(dateOrTime text: String) {
        guard let time = Self.read(text, { bytes in bytes.count == 10 ? Self.date(bytes) : Self.rfc3339(bytes) })
        else { return nil }
        self = time
    }

    /// `parse` over the text's UTF-8, without a copy when the string
    /// keeps it contiguous (every native string does).
    private static func read(_ text: String, _ parse: (UnsafeBufferPointer<UInt8>) -> Timestamp?) -> Timestamp? {
        if let time = text.utf8.withContiguousStorageIfAvailable(parse) { return time }
        return Array(text.utf8).withUnsafeBufferPointer(parse)
    }

    private static func rfc3339(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        var reader = DigitReader(bytes: bytes)
        guard let year = reader.number(4), reader.skip("-"), let month = reader.number(2), reader.skip("-"),
            let day = reader.number(2), reader.skip(anyOf: "Tt "), let hour = reader.number(2), reader.skip(":"),
            let minute = reader.number(2), reader.skip(":"), let second = reader.number(2)
        else { return nil }
        var nanos: Int64 = 0
        if reader.skip(".") {
            var digits = 0
            while let digit = reader.digit() {
                if digits < 9 { nanos = nanos * 10 + Int64(digit) }
                digits += 1
            }
            guard digits > 0 else { return nil }
            // Digits past the ninth are read and dropped; a range from
            // more than nine would trap.
            for _ in min(digits, 9)..<9 { nanos *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if reader.skip(anyOf: "Zz") {
        } else if let sign = reader.take(anyOf: "+-") {
            guard let offsetHours = reader.number(2), reader.skip(":"), let offsetMinutes = reader.number(2),
                offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offsetSeconds = Int64(offsetHours * 3600 + offsetMinutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }
        guard reader.atEnd, hour < 24, minute < 60, second < 61,
            let midnight = Timestamp.dayStart(year: year, month: month, day: day)
        else { return nil }
        let seconds = midnight.secondsSinceEpoch + Int64(hour * 3600 + minute * 60 + min(second, 59)) - offsetSeconds
        return Timestamp(nanosecondsSinceEpoch: seconds * 1_000_000_000 + nanos)
    }

    private static func date(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        var reader = DigitReader(bytes: bytes)
        guard let year = reader.number(4), reader.skip("-"), let month = reader.number(2), reader.skip("-"),
            let day = reader.number(2), reader.atEnd
        else { return nil }
        return Timestamp.dayStart(year: year, month: month, day: day)
    }

    /// Midnight UTC of a calendar date; nil for a date that does not
    /// exist (2026-02-31) or is outside 1970–2261. Counted, not asked of
    /// timegm(3): intake computes one per record with a time.
    package static func dayStart(year: Int, month: Int, day: Int) -> Timestamp? {
        // Nanoseconds since 1970 in an Int64 reach into 2262.
        guard (1...12).contains(month), (1...31).contains(day), (1970...2261).contains(year),
            day <= daysIn(month: month, year: year)
        else { return nil }
        // Days since 1970-01-01 in a calendar whose years start on March 1,
        // so that the leap day is the last of its year.
        let marchYear = month <= 2 ? year - 1 : year
        let era = marchYear / 400, yearOfEra = marchYear % 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Timestamp(secondsSinceEpoch: Int64(days) * 86_400)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

private struct DigitReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    var atEnd: Bool { index == bytes.count }

    mutating func digit() -> Int? {
        guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
        defer { index += 1 }
        return Int(bytes[index] - UInt8(ascii: "0"))
    }

    mutating func number(_ width: Int) -> Int? {
        var value = 0
        for _ in 0..<width {
            guard let d = digit() else { return nil }
            value = value * 10 + d
        }
        return value
    }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    mutating func skip(anyOf characters: String) -> Bool { take(anyOf: characters) != nil }

    mutating func take(anyOf characters: String) -> UInt8? {
        guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return nil }
        defer { index += 1 }
        return bytes[index]
    }
}
