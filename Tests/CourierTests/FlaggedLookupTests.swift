import Testing

@testable import CourierOperations
@testable import CourierPosix
@testable import CourierSpool

/// A flagged dropped file found by the name it was dropped as, where names
/// collide: bytes made `_`, and the counter `FlaggedName.make` adds within
/// one second. The ledger's flagging line says what each was dropped as.
@Suite struct FlaggedLookupTests {
    static let time = Timestamp(secondsSinceEpoch: 1_796_600_000)
    static let prefix = "invalid-\(time.compact)-"

    /// Drops `bytes` as `name` and flags it at `time`, as intake does;
    /// returns the flagged name.
    @discardableResult
    static func dropAndFlag(
        _ name: [UInt8], in spool: TemporarySpool, reason: String = "not valid JSON", at time: Timestamp = time
    ) throws -> String {
        let dropped = FileName(bytes: name)
        try spool.drop(Array("not json".utf8), as: dropped)
        let safe = try FlaggedName.make(for: dropped, at: time, in: spool.spool.directory(.needsAttention))
        try spool.session.commit(
            Transition.flag(
                dropped, from: .state(.queued), as: safe, reason: reason, actor: .person, at: time))
        return safe.description
    }

    static func found(_ text: [UInt8], in spool: TemporarySpool) throws -> [String] {
        try spool.spool.resolve(String(decoding: text, as: UTF8.self)).map(\.name.description)
    }

    @Test("two names that differ only in a byte made _ each find their own flagged file, not the other's")
    func namesMadeSafeAlikeFindTheirOwn() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let backslash = try Self.dropAndFlag([0x5C], in: spool)
        let control = try Self.dropAndFlag([0x01], in: spool)
        #expect(backslash == Self.prefix + "_" && control == Self.prefix + "_-2")
        #expect(try Self.found([0x01], in: spool) == [control])
        #expect(try Self.found([0x5C], in: spool) == [backslash])
        #expect(throws: OperationError.self, "nothing was dropped as _") { try Self.found(Array("_".utf8), in: spool) }
    }

    @Test("a name dropped twice in one second finds both flagged files, and not one dropped as NAME-2")
    func aNameFlaggedTwiceInOneSecondFindsBoth() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let first = try Self.dropAndFlag(Array("x.json".utf8), in: spool)
        let second = try Self.dropAndFlag(Array("x.json".utf8), in: spool)
        let other = try Self.dropAndFlag(Array("x.json-2".utf8), in: spool)
        #expect([first, second, other] == ["x.json", "x.json-2", "x.json-2-2"].map { Self.prefix + $0 })
        #expect(try Self.found(Array("x.json".utf8), in: spool) == [first, second])
        #expect(try Self.found(Array("x.json-2".utf8), in: spool) == [other])
    }

    @Test("without its ledger line (pruned) a flagged file is found by its safe part alone, not by a counter")
    func withoutTheLedgerTheSafePartDecides() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let plain = try Self.dropAndFlag([0x01], in: spool)
        let counted = try Self.dropAndFlag([0x01], in: spool)
        #expect(try Self.found([0x01], in: spool) == [plain, counted])
        let days = try spool.spool.ledgerDirectory.entries()
        while let day = try days.next() { try spool.spool.ledgerDirectory.remove(day) }
        #expect(try Self.found([0x01], in: spool) == [plain])
    }

    @Test(
        "a flagging line is read from its own day: another day's ledger file that cannot be read leaves it able to say"
    )
    func theLineIsReadFromItsOwnDay() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let backslash = try Self.dropAndFlag([0x5C], in: spool)
        let control = try Self.dropAndFlag([0x01], in: spool)
        // A folder where a day's file would be: reading it fails.
        let ledger = spool.spool.ledgerDirectory
        #expect(try ledger.makeDirectory(FileName("2020-01-01.tsv"), mode: 0o755))
        #expect(try Self.found([0x01], in: spool) == [control])
        #expect(try Self.found([0x5C], in: spool) == [backslash])
    }

    @Test("a flagging line cut at 200 bytes inside the dropped name still tells it from the other name made safe alike")
    func aCutFlaggingLineStillDecides() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        // The line's detail keeps 200 bytes: the name's last bytes, which
        // are all the two names differ in, are cut off; what is left still
        // rules out a name whose kept part differs.
        let reason = String(repeating: "r", count: 150)
        let first = Array(String(repeating: "a", count: 60).utf8) + [0x01]
        let second =
            Array(String(repeating: "a", count: 30).utf8) + [0x02] + Array(String(repeating: "a", count: 30).utf8)
        let one = try Self.dropAndFlag(first, in: spool, reason: reason)
        let two = try Self.dropAndFlag(second, in: spool, reason: reason)
        #expect(try Self.found(first, in: spool) == [one])
        #expect(try Self.found(second, in: spool) == [two])
        // A reason that fills the 200 bytes says nothing of the name: the
        // safe part alone decides, as without a line.
        let spool2 = try TemporarySpool.withUnreachableAlpha()
        let long = String(repeating: "r", count: 250)
        let plain = try Self.dropAndFlag([0x01], in: spool2, reason: long)
        let counted = try Self.dropAndFlag([0x02], in: spool2, reason: long)
        #expect(try Self.found([0x01], in: spool2) == [plain])
        #expect(try Self.found([0x02], in: spool2) == [plain], "\(counted) is told from nothing the ledger kept")
    }

    @Test(
        "a file flagged again after a resend is found by the name it was first dropped as; a safe part, only where no line says"
    )
    func aFileFlaggedAgainIsFoundByItsDroppedName() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        let first = try Self.dropAndFlag(Array("a b".utf8), in: spool)
        // A resend puts the flagged file back in queued/ under its flagged
        // name; flagged again, its line says it was dropped as that name.
        let again = try Self.dropAndFlag(
            Array(first.utf8), in: spool, at: Timestamp(secondsSinceEpoch: Self.time.secondsSinceEpoch + 60))
        try spool.spool.directory(.needsAttention).remove(FileName(first))
        #expect(try Self.found(Array("a b".utf8), in: spool) == [again])
        // Its line cannot say what it was first dropped as: its safe part
        // decides, for `a_b` as well, as it did for every name before.
        #expect(try Self.found(Array("a_b".utf8), in: spool) == [again])
        let other = try Self.dropAndFlag(Array("c d".utf8), in: spool)
        #expect(try Self.found(Array("c d".utf8), in: spool) == [other])
        #expect(throws: OperationError.self, "nothing was dropped as c_d") {
            try Self.found(Array("c_d".utf8), in: spool)
        }
    }

    @Test(
        "what a flagging line cannot say leaves the decision to the safe part",
        arguments: [
            // A secret in the name: the line is redacted.
            ("not valid JSON (dropped as a [redacted].json)", "a SECRET.json", nil),
            // Flagged again after a resend: the line names the flagged file.
            ("not valid JSON (dropped as invalid-20261130T070000Z-a_b)", "a b", nil),
            // 198 bytes that end in `)`: a whole line, or one cut there.
            (
                String(repeating: "r", count: 65) + " (dropped as " + String(repeating: "€", count: 40) + ")",
                String(repeating: "€", count: 40) + ")x", nil
            ),
            // Longer than the 100 characters a line shows of a name.
            ("r (dropped as " + String(repeating: "a", count: 100) + ")", String(repeating: "a", count: 105), nil),
            ("r (dropped as x.json)", "x.json", .yes),
            // Ends as the query does, but names another: `12-12`, not `12`.
            ("r (dropped as 12-12)", "12", .no),
            // Cut right after the marker: no name is shown.
            (String(repeating: "r", count: 187) + " (dropped as ", "order.json", nil),
            // A name that only begins like a flagged one.
            ("r (dropped as invalid-a b)", "invalid-a\tb", .no),
            // A whole or cut line either way rules out a query not
            // beginning with what it shows.
            (
                String(repeating: "r", count: 65) + " (dropped as d\\e" + String(repeating: "c", count: 118) + ")",
                "d e" + String(repeating: "c", count: 118), .no
            ),
            ("r (dropped as x.json)", "y.json", .no),
            // Cut right after a ` (dropped as ` that is inside the name.
            (
                String(repeating: "r", count: 120) + " (dropped as p p" + String(repeating: "p", count: 51)
                    + " (dropped as ",
                "p\tp" + String(repeating: "p", count: 51) + " (dropped as t", .no
            ),
            (
                String(repeating: "r", count: 120) + " (dropped as p p" + String(repeating: "p", count: 51)
                    + " (dropped as ",
                "p p" + String(repeating: "p", count: 51) + " (dropped as t", .partly
            ),
        ] as [(String, String, FlaggedName.Verdict?)])
    func whatALineSays(detail: String, name: String, verdict: FlaggedName.Verdict?) {
        #expect(FlaggedName.flagging(detail, saysDroppedAs: FileName(name)) == verdict)
    }

    @Test(
        "a flagged name's ledger day is the day of the time in it",
        arguments: [
            ("invalid-20261130T070000Z-x.json", "2026-11-30"), ("invalid-20261130T070000Z-x-2", "2026-11-30"),
            ("invalid-2026113xT070000Z-x", nil), ("invalid-20261130T070000Z-", nil), ("x.json", nil),
        ] as [(String, String?)])
    func ledgerDayOfAFlaggedName(name: String, day: String?) {
        #expect(FlaggedName.ledgerDay(of: FileName(name)) == day)
    }

    @Test(
        "the counter FlaggedName.make adds is told from a name's own digits",
        arguments: [
            ("a", "a", false), ("a-2", "a", true), ("a-17", "a", true), ("a-1", "a", nil), ("a-02", "a", nil),
            ("a-", "a", nil), ("a-+2", "a", nil), ("a-2x", "a", nil), ("ab", "a", nil), ("b", "a", nil),
        ] as [(String, String, Bool?)])
    func counterIsToldFromDigits(part: String, safe: String, counted: Bool?) {
        #expect(FlaggedName.counted(ArraySlice(part.utf8), safe: Array(safe.utf8)) == counted)
    }
}
