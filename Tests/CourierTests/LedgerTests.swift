import Glibc
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

@Suite struct LedgerTests {
    @Test func escapingKeepsOneEventOnOneLine() throws {
        let nasty = "a\tb\nc\rd\\e\u{1}f"
        let line = LedgerLine(
            time: Timestamp(rfc3339: "2026-11-30T07:00:00Z")!, round: "r1", subscriber: "alpha", key: "k",
            event: .needsAttention, status: 500, attempt: 1, durationMilliseconds: 12, detail: nasty)
        let text = line.formatted
        #expect(text.filter { $0 == "\n" }.count == 1)
        #expect(text.hasSuffix("\n"))
        let columns = text.dropLast().split(separator: "\t", omittingEmptySubsequences: false)
        #expect(columns.count == 9)
        #expect(columns[8] == #"a\tb\nc\rd\\e\x01f"#)
        let parsed = try #require(LedgerLine(parsing: text.dropLast()))
        #expect(parsed == line)
    }

    @Test func detailIsClippedTo200BytesOnACharacterBoundary() {
        let long = String(repeating: "é", count: 150)  // 300 bytes
        let line = LedgerLine(time: .now(), round: "r", subscriber: "s", key: "k", event: .sent, detail: long)
        let detail = line.formatted.dropLast().split(separator: "\t", omittingEmptySubsequences: false)[8]
        #expect(detail.utf8.count == 200)
        #expect(detail == Substring(String(repeating: "é", count: 100)))
    }

    @Test func appendedLinesAreReadBackPerDay() throws {
        let spool = try TemporarySpool()
        let ledger = Ledger(directory: spool.spool.ledgerDirectory)
        let day1 = Timestamp(rfc3339: "2026-11-29T23:59:59Z")!
        let day2 = Timestamp(rfc3339: "2026-11-30T00:00:01Z")!
        try ledger.append([
            LedgerLine(time: day1, round: "r", subscriber: "a", key: "k1", event: .sent, status: 201, attempt: 1),
            LedgerLine(time: day2, round: "r", subscriber: "a", key: "k2", event: .retry, status: 503, attempt: 1),
        ])
        #expect(try spool.names(in: .sent).isEmpty)
        let files = try Ledger.dayFiles(in: spool.spool.ledgerDirectory).map(\.day)
        #expect(files == ["2026-11-29", "2026-11-30"])
        let lines = try spool.ledger()
        #expect(lines.map(\.key) == ["k1", "k2"])
        #expect(lines.map(\.event) == [.sent, .retry])
    }

    @Test("event counts edited to a negative offset or a count at Int.max neither stop the metrics nor trap")
    func editedEventCountsAreSurvived() throws {
        let spool = try TemporarySpool()
        try Ledger(directory: spool.spool.ledgerDirectory).append(
            LedgerLine(time: .now(), round: "r", subscriber: "alpha", key: "k", event: .sent))
        let day = Timestamp.now().utcDay
        try spool.spool.writeControlFile(
            "event-counts.json",
            Array(#"{"position":{"day":"\#(day)","offset":-5},"counts":{"alpha":{"sent":7}}}"#.utf8))
        #expect(
            try EventCounters(session: spool.session).update()["alpha"]?["sent"] == 1, "counted again from the ledger")

        try spool.spool.writeControlFile(
            "event-counts.json", Array(#"{"counts":{"alpha":{"sent":9223372036854775807}}}"#.utf8))
        #expect(try EventCounters(session: spool.session).update()["alpha"]?["sent"] == Int.max)
    }

    @Test("the ledger search parses only lines with the needle, and finds the same lines as a full read")
    func searchingFindsWhatAFullReadFinds() throws {
        let spool = try TemporarySpool()
        let directory = spool.spool.ledgerDirectory
        var lines: [LedgerLine] = []
        for (day, keys) in [("2026-11-28", ["a1"]), ("2026-11-29", ["b1", "b1#2"]), ("2026-11-30", ["c1"])] {
            for (index, key) in keys.enumerated() {
                let time = try #require(Timestamp(rfc3339: "\(day)T0\(index + 1):00:00Z"))
                lines.append(LedgerLine(time: time, round: "r", subscriber: "alpha", key: key, event: .accepted))
                lines.append(
                    LedgerLine(time: time, round: "r", subscriber: "beta", key: key, event: .sent, status: 201))
            }
        }
        try Ledger(directory: directory).append(lines)
        let file = try directory.openFile(FileName("2026-11-29.tsv"), flags: O_WRONLY | O_APPEND)
        try file.write(Array("not a ledger line b1\nb1 nor this\n".utf8))
        for needle in ["\tb1\t", "\tbeta\t", "\tsent\t", "b1", "nowhere"] {
            var full: [LedgerLine] = []
            let fullMalformed = try Ledger.read(from: directory) {
                if $0.formatted.contains(needle) { full.append($0) }
            }
            var searched: [LedgerLine] = []
            let malformed = try Ledger.read(from: directory, containing: needle) { searched.append($0) }
            #expect(searched == full, "\(needle)")
            #expect(fullMalformed == 2)
            #expect(malformed == (needle == "b1" ? 2 : 0), "\(needle)")
        }
    }
}
