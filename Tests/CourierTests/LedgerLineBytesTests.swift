import Testing

@testable import CourierPosix
@testable import CourierSpool
@testable import CourierSupport

/// The ledger writes its lines as bytes (`LedgerLine.append(to:)`, with the
/// calendar worked out once a second); they must be the lines `formatted`
/// describes, byte for byte, or readers and scripts would see another format.
@Suite struct LedgerLineBytesTests {
    static func line(_ time: Timestamp, key: String, detail: String) -> LedgerLine {
        LedgerLine(
            time: time, round: "r-1", subscriber: "alpha", key: key, event: .sent, status: 201, attempt: 3,
            durationMilliseconds: 12_345, detail: detail)
    }

    @Test("lines written as bytes are the formatted lines, across seconds, days, escapes and a detail cut at 200 bytes")
    func bytesAreTheFormattedLine() {
        var times = LedgerTimeText()
        let midnight = Timestamp(secondsSinceEpoch: 1_796_083_199)  // 2026-11-30T23:59:59Z
        let cases: [(Timestamp, String, String)] = [
            (midnight, "k-1", "status=201"),
            (midnight + .milliseconds(7), "tab\tin\\key", "line\nbreak\u{7F}"),
            (midnight + .milliseconds(999), "k-3", String(repeating: "é", count: 150)),
            (midnight + .milliseconds(1_000), "k-4", ""),
            (midnight + .milliseconds(1_001), "ключ", String(repeating: "x", count: 300)),
            (Timestamp(secondsSinceEpoch: 0), "k-6", "\u{1}"),
        ]
        for (time, key, detail) in cases {
            let line = Self.line(time, key: key, detail: detail)
            var bytes: [UInt8] = []
            #expect(times.day(of: time) == time.utcDay, "\(time.rfc3339)")
            line.append(to: &bytes, times: &times, detail: detail)
            #expect(String(decoding: bytes, as: UTF8.self) == line.formatted, "\(time.rfc3339)")
        }
    }
}

extension LedgerLineBytesTests {
    @Test("numbers are written as their decimal text, from 0 to the largest, and a negative duration with its sign")
    func numbersAreTheirDecimalText() {
        var times = LedgerTimeText()
        let values: [Int64] = [
            0, 7, 9, 10, 19, 99, 100, 101, 110, 999, 1_000, 1_001, 1_010, 1_100, 9_999, 10_000, 10_001, 65_535,
            1_234_567_890, .max, -1, -42, .min,
        ]
        for value in values {
            var line = Self.line(Timestamp(secondsSinceEpoch: 1_796_083_199), key: "k", detail: "")
            line.durationMilliseconds = value
            line.status = Int(truncatingIfNeeded: value)
            line.attempt = Int(truncatingIfNeeded: value / 3)
            var bytes: [UInt8] = []
            line.append(to: &bytes, times: &times, detail: "")
            #expect(String(decoding: bytes, as: UTF8.self) == line.formatted, "\(value)")
        }
    }
}

extension LedgerLineBytesTests {
    @Test("every event is written as its name, as the formatted line has it")
    func eventsAreTheirNames() {
        var times = LedgerTimeText()
        for event in LedgerEvent.allCases {
            var line = Self.line(Timestamp(secondsSinceEpoch: 1_796_083_199), key: "k", detail: "d")
            line.event = event
            var bytes: [UInt8] = []
            line.append(to: &bytes, times: &times, detail: "d")
            #expect(String(decoding: bytes, as: UTF8.self) == line.formatted, "\(event)")
        }
    }
}

/// The redactor looks for an ASCII secret as bytes before it replaces it;
/// the search must find every match the String search found.
@Suite struct RedactorByteSearchTests {
    @Test("a secret is found after a partial match of it, at either end, and twice; an absent one changes nothing")
    func byteSearchFindsEveryMatch() {
        let redactor = Redactor(secrets: ["tok-abab-9", "é-secret-é"])
        #expect(redactor.redact("x tok-abatok-abab-9 y") == "x tok-aba\(Redactor.mark) y")
        #expect(redactor.redact("tok-abab-9") == Redactor.mark)
        #expect(redactor.redact("a tok-abab-9 b tok-abab-9") == "a \(Redactor.mark) b \(Redactor.mark)")
        #expect(redactor.redact("says é-secret-é here") == "says \(Redactor.mark) here")
        #expect(redactor.redact("tok-abab-") == "tok-abab-")
        #expect(redactor.redact("") == "")
    }
}

extension LedgerLineBytesTests {
    /// The check is made sixteen bytes at a time, then byte by byte: every
    /// position in and after a block must be seen, and the bytes next to
    /// the escaped ones (space, `~`, `[`, `]`, UTF-8's high bytes) must not
    /// count as them.
    @Test("a byte to escape is found at every offset of texts up to 48 bytes, and its neighbours never are")
    func escapeCheckSeesEveryOffset() {
        let escaped: [UInt8] = [0x00, 0x09, 0x0A, 0x1F, 0x7F, 0x5C]
        let neighbours: [UInt8] = [0x20, 0x7E, 0x5B, 0x5D, 0x80, 0xA9, 0xC3, 0xFF]
        var misses: [String] = []
        for length in 1...48 {
            for offset in 0..<length {
                for byte in escaped + neighbours {
                    var text = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    text[offset] = byte
                    let expected = byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\\")
                    let found = text.withUnsafeBufferPointer { LedgerLine.needsEscape($0) }
                    if found != expected { misses.append("length \(length), byte \(byte) at \(offset)") }
                }
            }
        }
        let firstMisses = Array(misses.prefix(5))
        #expect(firstMisses.isEmpty, "\(misses.count) in all")
    }

    @Test("a column is written as escape writes it, whether its special byte is in a vector block or the tail")
    func appendedColumnIsTheEscapedText() {
        for text in [
            String(repeating: "k", count: 16) + "\t", "é" + String(repeating: "x", count: 30) + "\\",
            String(repeating: "ключ", count: 5), "\u{7F}" + String(repeating: "y", count: 40), "",
        ] {
            var bytes: [UInt8] = []
            LedgerLine.appendEscaped(text, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == LedgerLine.escape(text), "\(text.debugDescription)")
        }
    }
}
