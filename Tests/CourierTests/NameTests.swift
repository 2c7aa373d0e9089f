import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

@Suite struct NameTests {
    @Test(arguments: [
        ("w-2026-11-30-0700@alpha.json", "w-2026-11-30-0700", "alpha"),
        ("w-2026-11-30-0700#2@alpha.json", "w-2026-11-30-0700#2", "alpha"),
        ("a:b.c_d@sub-1.json", "a:b.c_d", "sub-1"),
    ])
    func entryNamesParse(text: String, key: String, subscriber: String) throws {
        let entry = try #require(EntryName(text))
        #expect(entry.key.description == key)
        #expect(entry.subscriber.value == subscriber)
        #expect(entry.fileName.description == text)
    }

    @Test(arguments: [
        "w.json", "@alpha.json", "w@.json", "w@alpha", "../x@alpha.json", "w#1@alpha.json", "w#02@alpha.json",
        "w#x@alpha.json", ".w@alpha.json", "w@al.pha.json", "a b@alpha.json", "invalid-20261130T070000Z-x.json",
    ])
    func nonEntriesAreRefused(text: String) {
        #expect(EntryName(text) == nil)
    }

    @Test(arguments: ["../x", "a/b", "a\u{0}b", ".hidden", "", "é", "a b", "a@b", "a#b"])
    func hostileIDsAreRefused(text: String) {
        #expect(RecordID(text) == nil)
        #expect(RecordID.problem(with: text) != nil)
    }

    @Test func idLengthIsBounded() {
        #expect(RecordID(String(repeating: "a", count: 128)) != nil)
        #expect(RecordID(String(repeating: "a", count: 129)) == nil)
        #expect(RecordID(String(repeating: "a", count: 1 << 20)) == nil)
    }
}

@Suite struct UnitTests {
    @Test(arguments: [
        ("500ms", Duration.milliseconds(500)), ("15s", .seconds(15)), ("5m", .seconds(300)), ("1h", .seconds(3600)),
        ("183d", .seconds(183 * 86_400)), ("0s", .zero),
    ])
    func durationsParse(text: String, expected: Duration) {
        #expect(Units.duration(text) == expected)
    }

    @Test(arguments: ["", "15", "s", "1.5s", "-1s", "15 s", "1w", "99999999999999999999d"])
    func badDurationsAreRefused(text: String) {
        #expect(Units.duration(text) == nil)
    }

    @Test(arguments: [("1MiB", 1 << 20), ("512KiB", 512 << 10), ("1000", 1000), ("2MB", 2 << 20)])
    func sizesParse(text: String, expected: Int) {
        #expect(Units.size(text) == expected)
    }

    @Test func timesRoundTrip() throws {
        let time = try #require(Timestamp(rfc3339: "2026-11-30T07:00:00.123Z"))
        #expect(time.rfc3339 == "2026-11-30T07:00:00.123Z")
        #expect(time.utcDay == "2026-11-30")
        let offset = try #require(Timestamp(rfc3339: "2026-11-30T08:00:00+01:00"))
        #expect(offset.rfc3339 == "2026-11-30T07:00:00.000Z")
        #expect(Timestamp(rfc3339: "2026-02-31T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2026-11-30") == nil)
        #expect(Timestamp(dateOrTime: "2026-11-30")?.rfc3339 == "2026-11-30T00:00:00.000Z")
    }
}
