import CourierIdentifiers
import CourierPosix
import CourierSupport
import Foundation

/// A `kind`: a word subscribers filter on.
package enum RecordKind {
    package static let route = "route"

    package static func isValid(_ text: String) -> Bool { NameBytes.isWord(text) }

    /// The same rule over bytes: a kind written without escapes is
    /// checked where it is in the record.
    static func isValid(bytes: ArraySlice<UInt8>) -> Bool { NameBytes.isWord(bytes: bytes) }
}

/// Why a dropped file is not a record, in words for the ledger.
package enum RecordProblem: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge(size: Int, limit: Int)
    case notUTF8
    case notJSON(String)
    case notAnObject
    case missingField(String)
    case badField(String, String)

    package var description: String {
        switch self {
        // The checked read's words for the same file (Spool.tooLarge).
        case .tooLarge(let size, let limit): return "record is \(size) bytes, more than max-record-size (\(limit))"
        case .notUTF8: return "record is not UTF-8"
        case .notJSON(let reason): return "record is not JSON: \(reason)"
        case .notAnObject: return "record is not a JSON object"
        case .missingField(let field): return "record has no `\(field)`"
        case .badField(let field, let reason): return "`\(field)`: \(reason)"
        }
    }

    /// A file still being written looks like this; the settle rule gives
    /// it time before calling it invalid.
    package var mayBeIncomplete: Bool {
        switch self {
        case .notUTF8, .notJSON: return true
        default: return false
        }
    }
}

/// A validated record (docs/design.md §2). The bytes are kept exactly: they are
/// the body that is POSTed.
package struct Record: Sendable {
    package let id: RecordID
    package let kind: String
    package let time: Timestamp?
    package let subscribers: [SubscriberName]?
    package let awaitRoute: Bool
    /// `for`: the workout a route record belongs to.
    package let routeFor: RecordID?
    /// `op`, `entity`, `entity_id`/`updates`, `etag`/`version`: what a batch
    /// item and `If-Match` say of it (docs/design.md §8).
    package let outbox: OutboxFields
    package let bytes: [UInt8]

    package static func parse(_ bytes: [UInt8], maximumSize: Int) -> Result<Record, RecordProblem> {
        guard bytes.count <= maximumSize else { return .failure(.tooLarge(size: bytes.count, limit: maximumSize)) }
        // One pass checks the UTF-8 and the JSON and notes where the
        // top-level members are: the fields are read without another scan.
        guard let outline = JSONOutline(bytes, levels: 1) else {
            guard String(validating: bytes, as: UTF8.self) != nil else { return .failure(.notUTF8) }
            return .failure(.notJSON(Self.whyNotJSON(bytes)))
        }
        guard outline.kind(of: outline.root) == .object else { return .failure(.notAnObject) }
        let fields = RecordFields(outline: outline)
        do throws(RecordProblem) {
            let id = try fields.id()
            let kind = try fields.kind()
            let time = try fields.time()
            let subscribers = try fields.subscribers()
            let awaitRoute = try fields.awaitRoute()
            let routeFor = try fields.routeFor()
            if kind == RecordKind.route && routeFor == nil { throw .missingField("for") }
            let outbox = try OutboxFields(fields, id: id, kind: kind)
            return .success(
                Record(
                    id: id, kind: kind, time: time, subscribers: subscribers, awaitRoute: awaitRoute,
                    routeFor: routeFor, outbox: outbox, bytes: bytes))
        } catch {
            return .failure(error)
        }
    }

    /// Foundation's words for what is wrong, on the slow path only.
    private static func whyNotJSON(_ bytes: [UInt8]) -> String {
        do {
            _ = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            return "not a single JSON value"
        } catch {
            return shortReason(error)
        }
    }

    private static func shortReason(_ error: any Error) -> String {
        let nsError = error as NSError
        let detail = nsError.userInfo[NSDebugDescriptionErrorKey] as? String ?? nsError.localizedDescription
        return String(detail.prefix(120))
    }
}

/// A record's top-level members, read one field at a time; each field's
/// rule in one place. Names are compared as JSON reads them (`"\u006fp"` is
/// `op`, as it is to the server), and the last of a duplicated name wins,
/// as in most parsers.
struct RecordFields {
    let bytes: [UInt8]
    /// Each name as JSON reads it, decoded once here: a record's fields are
    /// looked up ten times or so, and most names have no escape, so most
    /// are a slice of `bytes`, not a copy.
    let members: [(name: ArraySlice<UInt8>, value: Range<Int>)]

    init(bytes: [UInt8], members: [JSONSplice.Member]) {
        self.bytes = bytes
        self.members = members.map { (Self.decodedName(ArraySlice($0.name)), $0.value) }
    }

    /// The members the outline of a record noted (its top value an object).
    init(outline: JSONOutline) {
        bytes = outline.bytes
        members = outline.members(of: outline.root).map { name, value in
            (Self.decodedName(outline.bytes[name]), value)
        }
    }

    /// The top-level members of a record's bytes; nil when they are not a
    /// JSON object.
    init?(bytes: [UInt8]) {
        let start = bytes.firstIndex { !JSONSplice.isSpace($0) } ?? bytes.count
        guard let top = JSONSplice.object(at: start, in: bytes) else { return nil }
        self.init(bytes: bytes, members: top.members)
    }

    /// A member's value as written, in place in the record's bytes.
    func field(_ name: String) -> ArraySlice<UInt8>? {
        name.withUTF8Bytes { wanted in
            members.last { $0.name.count == wanted.count && $0.name.elementsEqual(wanted) }
        }.map { bytes[$0.value] }
    }

    /// A member name as written, its escapes decoded (most names have none).
    private static func decodedName(_ raw: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard raw.contains(UInt8(ascii: "\\")) else { return raw }
        return JSONValidator.decodeString([UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")]).map { ArraySlice($0.utf8) }
            ?? raw
    }

    func string(_ value: ArraySlice<UInt8>) -> String? { JSONValidator.decodeString(value) }

    func id() throws(RecordProblem) -> RecordID {
        guard let raw = field("id") else { throw .missingField("id") }
        if let plain = JSONValidator.plainContents(raw), let id = RecordID(bytes: plain) { return id }
        guard let text = string(raw) else { throw .badField("id", "must be a string") }
        // Checked once: the problem is asked for only when it is not an id.
        guard let id = RecordID(text) else { throw .badField("id", RecordID.problem(with: text) ?? "is not an id") }
        return id
    }

    func kind() throws(RecordProblem) -> String {
        guard let raw = field("kind") else { throw .missingField("kind") }
        // Nearly every kind is written plainly: its bytes are checked in
        // place, and the String is made of word bytes, which need no
        // validating (that cost more than the rest of the field).
        if let plain = JSONValidator.plainContents(raw), RecordKind.isValid(bytes: plain) {
            return String(decoding: plain, as: UTF8.self)
        }
        guard let kind = string(raw), RecordKind.isValid(kind) else {
            throw .badField("kind", "must be a word of 1–64 \(NameBytes.wordClass)")
        }
        return kind
    }

    func time() throws(RecordProblem) -> Timestamp? {
        guard let raw = field("time") else { return nil }
        // A time without escapes (every one courier has seen) is read in
        // place: no string is made of it. The parser takes ASCII only.
        let parsed: Timestamp?
        if let plain = JSONValidator.plainContents(raw) {
            parsed = Timestamp(rfc3339: plain)
        } else {
            parsed = string(raw).flatMap(Timestamp.init(rfc3339:))
        }
        guard let time = parsed else {
            throw .badField("time", "must be an RFC 3339 time such as 2026-11-30T07:00:00Z")
        }
        return time
    }

    func subscribers() throws(RecordProblem) -> [SubscriberName]? {
        guard let raw = field("subscribers") else { return nil }
        let names = JSONSplice.arrayElements(Array(raw))
        guard raw.first == UInt8(ascii: "["), !names.isEmpty else {
            throw .badField("subscribers", "must be a non-empty list of names")
        }
        var parsed: [SubscriberName] = []
        for name in names {
            guard let text = string(name[...]), let subscriber = SubscriberName(text) else {
                throw .badField(
                    "subscribers", "\(String(decoding: name.prefix(80), as: UTF8.self)) is not a subscriber name")
            }
            if !parsed.contains(subscriber) { parsed.append(subscriber) }
        }
        return parsed
    }

    func awaitRoute() throws(RecordProblem) -> Bool {
        guard let raw = field("awaitRoute") else { return false }
        if raw.elementsEqual("false".utf8) { return false }
        if raw.elementsEqual("true".utf8) { return true }
        throw .badField("awaitRoute", "must be true or false")
    }

    func routeFor() throws(RecordProblem) -> RecordID? {
        guard let raw = field("for") else { return nil }
        guard let text = string(raw), let target = RecordID(text) else {
            throw .badField("for", "must be the id of a workout")
        }
        return target
    }
}
