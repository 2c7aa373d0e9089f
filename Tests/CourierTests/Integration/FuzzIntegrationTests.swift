import Foundation
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

/// A seeded generator of hostile input, 100,000 cases per parser: every
/// case must end in a value or a named refusal, never a crash, and the
/// answers must agree with an independent check where there is one.
@Suite(.tags(.integration)) struct FuzzTests {
    /// xorshift64*: the same seed gives the same cases on every machine.
    struct Generator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }

        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

        mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    }

    static let seeds: [[UInt8]] = [
        #"{"id":"w-1","kind":"workout","time":"2026-11-30T07:00:00Z","awaitRoute":true,"data":{"km":8.2,"pts":[[1,2],[3,4]]}}"#,
        #"{"id":"r-1","kind":"route","for":"w-1","data":{"points":[]}}"#,
        #"{"id":"s","kind":"sleep","subscribers":["alpha","beta"],"data":"\u00e9\n\"x\""}"#,
        #"[1,2,{"a":null,"b":true,"c":-1.5e+10}]"#,
    ].map { Array($0.utf8) }

    static let alphabet: [UInt8] =
        Array(#"{}[]":,\ntfrue-0123456789.eE+ abcu"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]

    /// One mutation of a seed: flip, insert, delete, splice or truncate.
    static func mutate(_ input: [UInt8], _ random: inout Generator) -> [UInt8] {
        mutate(input, &random, edits: 4, alphabet: alphabet) { bytes, at, random in
            let other = random.pick(seeds)
            let from = random.below(other.count)
            bytes.insert(contentsOf: other[from..<min(other.count, from + random.below(20) + 1)], at: at)
        }
    }

    /// Up to `edits` + 1 edits of `input`, each setting or inserting a byte
    /// of `alphabet`, removing one, cutting the rest off, `splice` (the
    /// fuzzed format's own), or flipping bits of one.
    static func mutate(
        _ input: [UInt8], _ random: inout Generator, edits: Int, alphabet: [UInt8],
        splice: (inout [UInt8], Int, inout Generator) -> Void
    ) -> [UInt8] {
        var bytes = input
        for _ in 0...random.below(edits) {
            guard !bytes.isEmpty else { break }
            let at = random.below(bytes.count)
            switch random.below(6) {
            case 0: bytes[at] = random.pick(alphabet)
            case 1: bytes.insert(random.pick(alphabet), at: at)
            case 2: bytes.remove(at: at)
            case 3: bytes = Array(bytes.prefix(at))
            case 4: splice(&bytes, at, &random)
            default: bytes[at] ^= UInt8(truncatingIfNeeded: random.next())
            }
        }
        return bytes
    }

    @Test func theRecordParserAgreesWithFoundationOnHostileInput() {
        var random = Generator(state: 0x5EED_C0FF_EE00_0001)
        var accepted = 0
        var disagreements: [String] = []
        var misread: [String] = []
        var refusedRecords: [String] = []
        for index in 0..<100_000 {
            let input = index < Self.seeds.count ? Self.seeds[index] : Self.mutate(random.pick(Self.seeds), &random)
            let valid = JSONValidator.isValid(input)
            // Foundation is the independent opinion: whatever courier takes
            // as JSON, it takes too. (It is laxer — trailing commas pass —
            // so the other direction is not asked.)
            // (UTF-8 is checked apart, before: only valid text is compared;
            // Foundation also refuses numbers beyond a Double, which JSON's
            // grammar allows and courier passes through as bytes.)
            if valid, let text = String(validating: input, as: UTF8.self),
                text.range(of: #"[eE][+-]?[0-9]{3,}"#, options: .regularExpression) == nil,
                (try? JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed])) == nil,
                disagreements.count < 5
            {
                disagreements.append(String(decoding: input, as: UTF8.self))
            }
            // Foundation reads the fields too, so that what courier takes
            // from the bytes (the id, the kind) is checked by a second reader,
            // not by the code that produced it.
            let object = valid ? (try? JSONSerialization.jsonObject(with: Data(input))) as? [String: Any] : nil
            switch Record.parse(input, maximumSize: 1 << 20) {
            case .success(let record):
                accepted += 1
                if object?["id"] as? String != record.id.value || object?["kind"] as? String != record.kind,
                    misread.count < 5
                {
                    misread.append("\(String(decoding: input, as: UTF8.self)) → \(record.id.value), \(record.kind)")
                }
            case .failure(let problem):
                // An object with a good id and kind and none of the fields
                // with rules of their own is a record: courier must take it.
                if let object, let id = object["id"] as? String, let kind = object["kind"] as? String,
                    RecordID.problem(with: id) == nil, RecordKind.isValid(kind), kind != RecordKind.route,
                    ["time", "subscribers", "awaitRoute", "for"].allSatisfy({ object[$0] == nil }),
                    refusedRecords.count < 5
                {
                    refusedRecords.append("\(String(decoding: input, as: UTF8.self)): \(problem)")
                }
            }
        }
        #expect(disagreements.isEmpty, "courier took as JSON what Foundation refused: \(disagreements)")
        #expect(misread.isEmpty, "courier read another id or kind than Foundation: \(misread)")
        #expect(refusedRecords.isEmpty, "courier refused records: \(refusedRecords)")
        #expect(accepted > 100, "the generator hardly reached valid records: \(accepted)")
    }

    @Test func entryNamesRoundTripOrAreRefused() {
        var random = Generator(state: 0xE47_0001)
        let keys = [
            "w-1", "a.b", ":x", ".hidden", "", "#2", "x#2", "x#0", "x#02", "x#", "a/b", "..", "é", "a b", "a@b",
        ]
        let subscribers = ["alpha", "b-2", "", "a.b", "a:b", "x/y", "é", String(repeating: "s", count: 65)]
        let endings = [".json", "", ".json.json", ".JSON", ".jso"]
        var parsed = 0
        for _ in 0..<100_000 {
            var text =
                random.pick(keys) + (random.below(8) == 0 ? "" : "@") + random.pick(subscribers) + random.pick(endings)
            if random.below(10) == 0 { text = String(decoding: Self.mutate(Array(text.utf8), &random), as: UTF8.self) }
            guard let entry = EntryName(text) else { continue }
            parsed += 1
            // What parses names a file in one directory and parses back the same.
            #expect(entry.fileName.description == text)
            #expect(!text.contains("/") && !text.hasPrefix("."))
            #expect(EntryName(entry.fileName.description) == entry)
        }
        #expect(parsed > 1000)
    }

    @Test func theConfigParserNamesALineOrAccepts() {
        var random = Generator(state: 0xC0F1_6000)
        let seed = Array(ConfigTests.full.utf8)
        let lineCount = ConfigTests.full.split(separator: "\n", omittingEmptySubsequences: false).count
        var refused = 0
        for _ in 0..<100_000 {
            let input = Self.mutate(seed, &random)
            do {
                _ = try Configuration.parse(input, file: "fuzz.conf")
            } catch {
                refused += 1
                switch error {
                case .syntax(_, let line, _), .invalid(_, let line, _, _, _):
                    #expect(line >= 0 && line <= lineCount + 2, "\(error)")
                default:
                    break
                }
                #expect(error.description.hasPrefix("fuzz.conf"), "\(error)")
            }
        }
        #expect(refused > 1000)
    }
}

/// Record fields that become headers (`etag`, `version` → If-Match), fuzzed
/// with every escape JSON allows: whatever a record holds, either the one
/// header check refuses it, or the line that goes to curl is a single line
/// with no control byte.
@Suite(.tags(.integration)) struct HeaderFuzzTests {
    static let pieces = [
        "v1", "\\r", "\\n", "\\u0000", "\\u000d", "\\u000a", "\\t", "\\u007f", "\\u001b", "é", "\\\"", "W/",
        "Idempotency-Key: x", " ", "\\u2028", ",", "%0d%0a",
    ]

    @Test("no record field ever reaches the wire as more than one header line")
    func recordFieldsNeverSplitHeaders() {
        var random = FuzzTests.Generator(state: 0x4EAD_E500_0000_0009)
        var refused = 0
        var sent = 0
        var broken: [String] = []
        for _ in 0..<100_000 {
            let value = (0...random.below(6)).map { _ in random.pick(Self.pieces) }.joined()
            let field = random.below(2) == 0 ? "etag" : "version"
            let quoted = random.below(5) == 0 ? value : "\"\(value)\""
            let record = Array(#"{"id":"f","kind":"order","op":"UPDATE","\#(field)":\#(quoted)}"#.utf8)
            // An update's etag or version is refused at intake unless it
            // makes an entity tag; what is taken always makes one header line.
            guard case .success(let fields) = OutboxFields.read(record) else {
                refused += 1
                continue
            }
            guard let tag = fields.precondition else {
                broken.append("an UPDATE with a \(field) went without If-Match: \(quoted)")
                continue
            }
            do {
                let header = try HTTPHeaderField(name: "If-Match", value: tag)
                sent += 1
                if header.line.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
                    broken.append(header.line)
                }
            } catch {
                broken.append("accepted, but not a header: \(tag)")
            }
        }
        #expect(broken.isEmpty, "\(broken.prefix(3))")
        #expect(refused > 1_000 && sent > 1_000, "both outcomes are exercised: \(refused) refused, \(sent) sent")
    }
}
