import CourierPosix
import CourierSupport

extension LedgerLine {
    /// The line as written, newline included, appended to `bytes` as its
    /// columns are made: nine Strings and a `joined` per line were most of
    /// the ledger's cost in a busy round. `time` is the line's time as the
    /// ledger writes it (`LedgerTimeText`), `detail` its detail redacted.
    func append(to bytes: inout [UInt8], time: [UInt8], detail: String) {
        let tab = UInt8(ascii: "\t")
        bytes.append(contentsOf: time)
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
    /// is copied as it is.
    private static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
        if text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: escape(text).utf8)
        } else {
            bytes.append(contentsOf: text.utf8)
        }
    }

    /// Decimal digits; `String(value)` of a small number needs no
    /// allocation of its own.
    private static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: String(value).utf8)
    }
}

/// Times as the ledger writes them, `2026-11-30T07:00:00.123Z`, whose first
/// ten bytes name the day file: the calendar is worked out once a second,
/// not once a line.
struct LedgerTimeText {
    private var second = Int64.min
    private var prefix: [UInt8] = []
    private(set) var day = ""

    /// `time` as `Timestamp.rfc3339` writes it; `day` is then its UTC day.
    mutating func text(of time: Timestamp) -> [UInt8] {
        let second = time.secondsSinceEpoch
        if second != self.second {
            self.second = second
            // `2026-11-30T07:00:00`: the part that changes once a second.
            prefix = Array(time.rfc3339.utf8.prefix(19))
            day = String(decoding: prefix.prefix(10), as: UTF8.self)
        }
        let millis = Int(time.nanosecondOfSecond / 1_000_000)
        let zero = UInt8(ascii: "0")
        var text = prefix
        text.reserveCapacity(24)
        text.append(UInt8(ascii: "."))
        text.append(zero + UInt8(millis / 100))
        text.append(zero + UInt8(millis / 10 % 10))
        text.append(zero + UInt8(millis % 10))
        text.append(UInt8(ascii: "Z"))
        return text
    }
}
