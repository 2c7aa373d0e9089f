import Testing

@testable import CourierIdentifiers
@testable import CourierSink
@testable import CourierSpool

/// The sink judges keys, ids and names by its own rules (SinkNames.swift),
/// written from docs/design.md §1 and docs/sink.md. These hold it to the
/// documents, and to courier's own reading of them: where the two
/// disagree, one of them is wrong.
@Suite struct SinkNameTests {
    @Test(
        "the sink takes the keys the documents allow",
        arguments: [
            "a", "w-2026-11-30-0700", "a:b.c_d", "x#2", "x#999999", "batch-0123456789abcdef",
            String(repeating: "a", count: 128), String(repeating: "a", count: 128) + "#17",
        ])
    func keysTheDocumentsAllow(text: String) {
        #expect(IdempotencyKey(text)?.text == text)
    }

    @Test(
        "the sink refuses the keys the documents do not",
        arguments: [
            "", ".a", "x#1", "x#0", "x#02", "x#1000000", "x#", "#2", "x#2#3", "x#+2", "a b", "a/b", "a@b", "é",
            "a\u{0}b", String(repeating: "a", count: 129),
        ])
    func keysTheDocumentsRefuse(text: String) {
        #expect(IdempotencyKey(text) == nil)
    }

    /// Every string of up to four bytes from an alphabet that reaches each
    /// rule: the classes, the leading dot, the copy number's digits and
    /// its `#`, and bytes no name may hold.
    static let probes: [String] = {
        let alphabet = ["a", "Z", "0", "1", "2", "9", "#", ".", ":", "-", "_", "@", " ", "/", "é"]
        var strings = [""]
        var level = [""]
        for _ in 1...4 {
            level = level.flatMap { prefix in alphabet.map { prefix + $0 } }
            strings += level
        }
        return strings
    }()

    @Test("the sink and courier agree on every key, id and catalog name")
    func theSinkAndCourierAgree() {
        var disagreements: [String] = []
        for text in Self.probes {
            if (IdempotencyKey(text) == nil) != (DeliveryKey(text) == nil) { disagreements.append("key \(text)") }
            if (EntityID(text) == nil) != (RecordID(text) == nil) { disagreements.append("id \(text)") }
            if SinkBytes.isCatalogName(Substring(text)) != (SubscriberName(text) != nil) {
                disagreements.append("catalog \(text)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(20))")
        #expect(Self.probes.count > 50_000)
    }

    @Test("the sink reads header names as RFC 9110 tokens, as courier writes them")
    func headerNameBytesAgree() {
        for byte in UInt8.min...UInt8.max {
            #expect(SinkBytes.isToken(byte) == NameBytes.isToken(byte), "byte 0x\(String(byte, radix: 16))")
        }
        #expect(SinkBytes.isToken(UInt8(ascii: "a")) && !SinkBytes.isToken(UInt8(ascii: ":")))
    }

    @Test(
        "the sink's TSV fields stay on one line, escaped as the ledger's",
        arguments: ["plain", "tab\there", "new\nline\r", "back\\slash", "bell\u{7}del\u{7F}", "wörker"])
    func logFieldsAreEscapedAsTheLedgers(text: String) {
        let escaped = SinkBytes.escaped(text)
        #expect(!escaped.contains { $0.isNewline || $0 == "\t" })
        #expect(escaped == LedgerLine.escape(text))
    }
}
