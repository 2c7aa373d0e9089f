import CourierPosix
import CourierSupport

extension LedgerLine {
    /// The line as written, newline included, appended to `bytes` as its
    /// columns are made: nine Strings and a `joined` per line were most of
    /// the ledger's cost in a busy round. `times` writes the line's time,
    /// `detail` is its detail redacted.
    func append(to bytes: inout [UInt8], times: inout LedgerTimeText, detail: String) {
        let tab = UInt8(ascii: "\t")
        times.append(time, to: &bytes)
        bytes.append(tab)
        Self.appendEscaped(round, to: &bytes)
        bytes.append(tab)
        Self.appendEscaped(subscriber, to: &bytes)
        bytes.append(tab)
        Self.appendEscaped(key, to: &bytes)
        bytes.append(tab)
        bytes.append(contentsOf: event.rawValue.utf8)
        bytes.append(tab)
        Self.appendDecimal(Int64(status), to: &bytes)
        bytes.append(tab)
        Self.appendDecimal(Int64(attempt), to: &bytes)
        bytes.append(tab)
        Self.appendDecimal(durationMilliseconds, to: &bytes)
        bytes.append(tab)
        let cut = detail.utf8.count > Self.detailLimit ? detail.utf8Prefix(Self.detailLimit) : detail
        Self.appendEscaped(cut, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// `escape(text)`'s bytes; text that needs no escape, nearly all of it,
    /// is copied as it is, looked at through its UTF-8 buffer (a String's
    /// `utf8` view walked byte by byte cost more than the copy). Ledger
    /// lines and the etag journal's lines are written through it.
    static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
        let copied = text.withUTF8Bytes { utf8 -> Bool in
            guard !needsEscape(utf8) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if !copied { bytes.append(contentsOf: escape(text).utf8) }
    }

    /// A byte `escape` rewrites: a control byte (below a space, or DEL) or
    /// a backslash. UTF-8's bytes above 0x7F are text.
    static func isEscaped(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\\") }

    /// Whether `utf8` holds a byte `isEscaped` names. Sixteen bytes a turn
    /// with three vector compares (the same rule): a batch record's columns
    /// and etag lines are a few hundred bytes, and the byte loop was a sixth
    /// of the commit thread's own instructions.
    static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return false }
        var at = 0
        while at + 16 <= utf8.count {
            // Signed lanes, which SSE2 and NEON compare in one instruction
            // (unsigned ones were compared lane by lane). With the sign bit
            // flipped, the control bytes 0...0x1F are the lanes below -96.
            let block = UnsafeRawPointer(base + at).loadUnaligned(as: SIMD16<Int8>.self)
            let control = (block ^ Self.signBits) .< Self.aboveControls
            if any(control .| (block .== Self.deletes) .| (block .== Self.backslashes)) { return true }
            at += 16
        }
        while at < utf8.count {
            if isEscaped(base[at]) { return true }
            at += 1
        }
        return false
    }

    private static var signBits: SIMD16<Int8> { SIMD16(repeating: -0x80) }
    private static var aboveControls: SIMD16<Int8> { SIMD16(repeating: 0x20 ^ -0x80) }
    private static var deletes: SIMD16<Int8> { SIMD16(repeating: 0x7F) }
    private static var backslashes: SIMD16<Int8> { SIMD16(repeating: 0x5C) }

    /// Decimal digits, as `String(value)` writes them, put straight into
    /// the line.
    private static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        guard value >= 0 else {
            bytes.append(contentsOf: String(value).utf8)
            return
        }
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        let zero = UInt8(ascii: "0")
        // One byte at a time: a line's numbers are one to four digits, and
        // `append(contentsOf: repeatElement(…))` cost six times as much.
        for _ in 0..<digits { bytes.append(zero) }
        var index = bytes.count - 1
        rest = value
        repeat {
            bytes[index] = zero + UInt8(rest % 10)
            rest /= 10
            index -= 1
        } while rest > 0
    }
}

/// Times as the ledger writes them, `2026-11-30T07:00:00.123Z`, whose first
/// ten bytes name the day file: the calendar is worked out once a second,
/// not once a line.
struct LedgerTimeText {
    private var second = Int64.min
    private var prefix: [UInt8] = []
    private var day = ""

    /// The UTC day of `time`, `YYYY-MM-DD`: the name of its day file.
    mutating func day(of time: Timestamp) -> String {
        advance(to: time)
        return day
    }

    /// Appends `time` as `Timestamp.rfc3339` writes it.
    mutating func append(_ time: Timestamp, to bytes: inout [UInt8]) {
        advance(to: time)
        let millis = Int(time.nanosecondOfSecond / 1_000_000)
        let zero = UInt8(ascii: "0")
        bytes.append(contentsOf: prefix)
        bytes.append(UInt8(ascii: "."))
        bytes.append(zero + UInt8(millis / 100))
        bytes.append(zero + UInt8(millis / 10 % 10))
        bytes.append(zero + UInt8(millis % 10))
        bytes.append(UInt8(ascii: "Z"))
    }

    private mutating func advance(to time: Timestamp) {
        let second = time.secondsSinceEpoch
        guard second != self.second else { return }
        self.second = second
        // `2026-11-30T07:00:00`: the part that changes once a second.
        prefix = Array(time.rfc3339.utf8.prefix(19))
        day = String(decoding: prefix.prefix(10), as: UTF8.self)
    }
}
