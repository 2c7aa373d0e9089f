import Testing

@testable import CourierPosix
@testable import CourierSupport

/// `courier log --since/--until`: journalctl's forms, in UTC, against a
/// clock the test sets.
@Suite struct TimeExpressionTests {
    static let now = Timestamp(rfc3339: "2026-11-30T07:45:30.25Z")

    @Test(
        "every form reads as the UTC time it names",
        arguments: [
            ("now", "2026-11-30T07:45:30.250Z"),
            ("today", "2026-11-30T00:00:00.000Z"),
            ("yesterday", "2026-11-29T00:00:00.000Z"),
            ("tomorrow", "2026-12-01T00:00:00.000Z"),
            ("-1h", "2026-11-30T06:45:30.250Z"),
            ("-30m", "2026-11-30T07:15:30.250Z"),
            ("-2d", "2026-11-28T07:45:30.250Z"),
            ("-90s", "2026-11-30T07:44:00.250Z"),
            ("2026-11-29", "2026-11-29T00:00:00.000Z"),
            ("2026-11-29 18:05", "2026-11-29T18:05:00.000Z"),
            ("2026-11-29 18:05:07", "2026-11-29T18:05:07.000Z"),
            ("2026-11-29T18:05", "2026-11-29T18:05:00.000Z"),
            ("2026-11-29T18:05:07", "2026-11-29T18:05:07.000Z"),
            ("@1764486000", "2025-11-30T07:00:00.000Z"),
            ("@1764486000.5", "2025-11-30T07:00:00.500Z"),
            ("@0", "1970-01-01T00:00:00.000Z"),
            ("2026-11-29T18:05:07Z", "2026-11-29T18:05:07.000Z"),
            ("2026-11-29T18:05:07.125+01:00", "2026-11-29T17:05:07.125Z"),
            ("2026-11-29 18:05:07-02:30", "2026-11-29T20:35:07.000Z"),
        ])
    func formsAreRead(text: String, expected: String) throws {
        let now = try #require(Self.now)
        #expect(TimeExpression.parse(text, now: now)?.rfc3339 == expected, "\(text)")
    }

    @Test("today and yesterday are UTC days, also just after midnight and just before it")
    func daysAreUTCDays() throws {
        let early = try #require(Timestamp(rfc3339: "2026-12-01T00:00:00.001Z"))
        #expect(TimeExpression.parse("today", now: early)?.rfc3339 == "2026-12-01T00:00:00.000Z")
        #expect(TimeExpression.parse("yesterday", now: early)?.rfc3339 == "2026-11-30T00:00:00.000Z")
        let late = try #require(Timestamp(rfc3339: "2026-11-30T23:59:59.999Z"))
        #expect(TimeExpression.parse("today", now: late)?.rfc3339 == "2026-11-30T00:00:00.000Z")
    }

    @Test(
        "anything else is refused, rather than guessed",
        arguments: [
            "", "Today", "yesterdy", "1h", "-1", "-h", "-", "-1w", "+1h", "-1.5h", "@", "@-5", "@1.", "@1.2.3", "@abc",
            "@99999999999", "@1764486000.1234567890", "2026-11-31", "2026-13-01", "2026-11-30 24:00",
            "2026-11-30 07:60", "2026-11-30 07:00:60", "2026-11-30 7:00", "2026-11-30 07", "2026-11-30  07:00",
            "2026-11-30 07:00:00:00", "2026-11-30x07:00", "30.11.2026", "1969-12-31",
        ])
    func badInputIsRefused(text: String) throws {
        #expect(TimeExpression.parse(text, now: try #require(Self.now)) == nil, "\(text)")
    }
}
