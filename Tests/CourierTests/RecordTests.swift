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

@Suite struct RecordTests {
    static func problem(_ text: String, limit: Int = 1 << 20) -> RecordProblem? {
        if case .failure(let problem) = Record.parse(Array(text.utf8), maximumSize: limit) { return problem }
        return nil
    }

    @Test func aFullRecordParses() throws {
        let text =
            #"{"id":"w-1","kind":"workout","time":"2026-11-30T07:00:00Z","subscribers":["alpha"],"awaitRoute":true,"data":{"km":5},"extra":1}"#
        let record = try Record.parse(Array(text.utf8), maximumSize: 1 << 20).get()
        #expect(record.id.value == "w-1")
        #expect(record.kind == "workout")
        #expect(record.time == Timestamp(rfc3339: "2026-11-30T07:00:00Z"))
        #expect(record.subscribers == [SubscriberName("alpha")!])
        #expect(record.awaitRoute)
        #expect(record.bytes == Array(text.utf8))
    }

    @Test("an id reads the same written plainly or with escapes, and the same ids are refused either way")
    func idPlainOrEscaped() throws {
        func id(_ literal: String) -> String? {
            try? Record.parse(Array(#"{"id":\#(literal),"kind":"sleep"}"#.utf8), maximumSize: 1 << 20).get().id.value
        }
        #expect(id(#""w-1.a:b_C""#) == "w-1.a:b_C")
        #expect(id(#""w\u002d1""#) == "w-1")
        #expect(id("\"" + String(repeating: "a", count: 128) + "\"") == String(repeating: "a", count: 128))
        for refused in [
            #""""#, #"".a""#, #""a b""#, #""a@b""#, #""é""#, "\"" + String(repeating: "a", count: 129) + "\"", "7",
        ] {
            #expect(id(refused) == nil, "\(refused)")
            #expect(Self.problem(#"{"id":\#(refused),"kind":"sleep"}"#) != nil)
        }
    }

    @Test("a time reads the same with escapes as without, and a time that is not one is refused either way")
    func timeWithEscapes() throws {
        let escaped = try Record.parse(
            Array(#"{"id":"a","kind":"sleep","time":"2026-11-30T07:00:00\u005A"}"#.utf8), maximumSize: 1 << 20
        ).get()
        #expect(escaped.time == Timestamp(rfc3339: "2026-11-30T07:00:00Z"))
        #expect(Self.problem(#"{"id":"a","kind":"sleep","time":"2026-11-30T07:00:00\u0058"}"#) != nil)
        #expect(Self.problem(#"{"id":"a","kind":"sleep","time":"2026-02-30T07:00:00Z"}"#) != nil)
        #expect(Self.problem(#"{"id":"a","kind":"sleep","time":2026}"#) != nil)
    }

    @Test(arguments: [
        (#"{"kind":"sleep"}"#, RecordProblem.missingField("id")),
        (#"{"id":"a"}"#, .missingField("kind")),
        (#"[1,2]"#, .notAnObject),
        (#"{"id":"a","kind":"route"}"#, .missingField("for")),
    ])
    func missingPiecesAreNamed(text: String, expected: RecordProblem) {
        #expect(Self.problem(text) == expected)
    }

    @Test(arguments: [
        #"{"id":"../x","kind":"sleep"}"#, #"{"id":"a/b","kind":"sleep"}"#, #"{"id":"a\u0000b","kind":"sleep"}"#,
        #"{"id":".x","kind":"sleep"}"#, #"{"id":5,"kind":"sleep"}"#, #"{"id":"a","kind":"sl eep"}"#,
        #"{"id":"a","kind":"sleep","time":"yesterday"}"#, #"{"id":"a","kind":"sleep","awaitRoute":1}"#,
        #"{"id":"a","kind":"sleep","subscribers":"alpha"}"#, #"{"id":"a","kind":"sleep","subscribers":["a@b"]}"#,
    ])
    func badFieldsAreRefused(text: String) throws {
        let problem = try #require(Self.problem(text))
        guard case .badField = problem else {
            Issue.record("expected a bad field, got \(problem)")
            return
        }
        #expect(!problem.mayBeIncomplete)
    }

    @Test(
        "a kind is a word of 1–64 bytes as JSON reads it, written plainly or with escapes",
        arguments: [
            (#""sleep""#, "sleep"), (#""sl\u0065ep""#, "sleep"), (#""a-b_9""#, "a-b_9"),
            ("\"" + String(repeating: "k", count: 64) + "\"", String(repeating: "k", count: 64)),
            ("\"" + String(repeating: "k", count: 65) + "\"", nil), (#""""#, nil), ("5", nil), (#""sl.eep""#, nil),
            (#""slé""#, nil), (#""sl\u0020p""#, nil), (#"["sleep"]"#, nil),
        ] as [(String, String?)])
    func kindIsAWord(literal: String, expected: String?) {
        let parsed = Record.parse(Array(#"{"id":"a","kind":\#(literal)}"#.utf8), maximumSize: 1 << 20)
        switch parsed {
        case .success(let record): #expect(record.kind == expected)
        case .failure(let problem):
            #expect(expected == nil)
            #expect(problem == .badField("kind", "must be a word of 1–64 \(NameBytes.wordClass)"))
        }
    }

    @Test func hugeIDsAndRecordsAreRefused() throws {
        let hugeID = #"{"id":""# + String(repeating: "a", count: 1 << 20) + #"","kind":"sleep"}"#
        #expect(Self.problem(hugeID, limit: 4 << 20) == .badField("id", "id is \(1 << 20) bytes long (at most 128)"))
        #expect(Self.problem(hugeID) == .tooLarge(size: hugeID.utf8.count, limit: 1 << 20))
    }

    @Test("the parser and the checked read refuse a record over max-record-size in the same words")
    func tooLargeIsSaidOnce() {
        let size = 1_048_577
        let limit = 1 << 20
        #expect(RecordProblem.tooLarge(size: size, limit: limit).description == Spool.tooLarge(size, limit: limit))
        #expect(Spool.tooLarge(size, limit: limit).contains("max-record-size (\(limit))"))
    }

    @Test func halfWrittenFilesMayBeIncomplete() throws {
        let problem = try #require(Self.problem(#"{"id":"a","kin"#))
        #expect(problem.mayBeIncomplete)
        let notUTF8 = Record.parse([0x7B, 0xFF, 0x7D], maximumSize: 100)
        guard case .failure(.notUTF8) = notUTF8 else {
            Issue.record("accepted invalid UTF-8")
            return
        }
    }
}
