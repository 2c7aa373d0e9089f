import Glibc
import Testing

@testable import CourierPosix
@testable import CourierRecords
@testable import CourierSpool
@testable import CourierSupport

/// `Timestamp.dayStart` counts days itself; timegm(3) is the reference it
/// must agree with, date by date.
@Suite struct CalendarDateTests {
    @Test("every date from 1970 to 2261 starts at the second timegm gives it, and no other day of a month exists")
    func everyDateAgreesWithTimegm() {
        var checked = 0
        for year in 1970...2261 {
            for month in 1...12 {
                for day in 1...31 {
                    var parts = tm()
                    parts.tm_year = Int32(year - 1900)
                    parts.tm_mon = Int32(month - 1)
                    parts.tm_mday = Int32(day)
                    let seconds = timegm(&parts)
                    let exists = parts.tm_mday == Int32(day) && parts.tm_mon == Int32(month - 1)
                    let counted = Timestamp.dayStart(year: year, month: month, day: day)
                    if exists {
                        #expect(counted?.secondsSinceEpoch == Int64(seconds), "\(year)-\(month)-\(day)")
                        checked += 1
                    } else {
                        #expect(counted == nil, "\(year)-\(month)-\(day) does not exist")
                    }
                }
            }
        }
        #expect(checked == 106_651)
    }

    @Test(
        "a date outside 1970–2261 or a month or day out of range is no date",
        arguments: [
            (1969, 12, 31), (2262, 1, 1), (2026, 0, 1), (2026, 13, 1), (2026, 1, 0), (2026, 1, 32),
        ])
    func outOfRange(date: (Int, Int, Int)) {
        #expect(Timestamp.dayStart(year: date.0, month: date.1, day: date.2) == nil)
    }

    @Test("an RFC 3339 time and a bare date read as the calendar says")
    func parsing() {
        #expect(
            Timestamp(rfc3339: "2024-02-29T23:59:60.5-01:30")?.rfc3339
                == Timestamp(rfc3339: "2024-03-01T01:29:59.500Z")?.rfc3339)
        #expect(Timestamp(dateOrTime: "2024-02-29")?.secondsSinceEpoch == 1_709_164_800)
        #expect(Timestamp(dateOrTime: "2023-02-29") == nil)
        #expect(Timestamp(rfc3339: "2026-11-30T07:00:00") == nil)
    }

    @Test(
        "a time with more than nine fractional digits reads to the nanosecond, alone, in a record and in a ledger line")
    func tenFractionalDigits() throws {
        let nine = Timestamp(rfc3339: "2026-11-30T07:00:00.123456789Z")
        #expect(nine != nil)
        #expect(Timestamp(rfc3339: "2026-11-30T07:00:00.1234567890Z") == nine)
        #expect(Timestamp(rfc3339: "2026-11-30T07:00:00.12345678901234567890Z") == nine)
        let record = try Record.parse(
            Array(#"{"id":"a","kind":"sleep","time":"2026-11-30T07:00:00.1234567890Z"}"#.utf8), maximumSize: 1 << 20
        ).get()
        #expect(record.time == nine)
        let line = LedgerLine(parsing: "2026-11-30T07:00:00.1234567890Z\tr\talpha\ta1\tsent\t200\t1\t5\tok"[...])
        #expect(line?.time == nine)
    }
}
