import CourierIdentifiers
import CourierSupport

/// `op`: what an outbox item does to its entity, spelled exactly as the
/// sync architecture's outbox does (`op (CREATE/UPDATE/DELETE)`).
package enum RecordOperation: String, Sendable, CaseIterable {
    case create = "CREATE"
    case update = "UPDATE"
    case delete = "DELETE"

    /// An update or a delete changes an entity that exists: its `etag` or
    /// `version` is the one it was written against.
    package var hasPrecondition: Bool { self != .create }
}

/// What a batch item and `If-Match` say of a record (docs/design.md §8): its
/// operation, the entity it writes and, for an update or a delete, the
/// version it was written against. Read the same way at intake, by
/// `enqueue` and when the request is built, so what was accepted is what
/// is sent.
package struct OutboxFields: Sendable, Equatable {
    package let operation: RecordOperation
    /// `entity`, else the record's `kind`.
    package let entity: String
    /// The entity it writes, the batch item's `client_id`: `entity_id` (the
    /// architecture's name), else `updates`, else the record's own `id`.
    package let entityID: RecordID
    /// `If-Match`, a valid entity tag: an update's or a delete's `etag`,
    /// else its `version`; nil when it gives neither.
    package let precondition: String?

    /// Longer than any entity name a backend uses, short enough for a line.
    package static let entityLimit = 128

    /// The fields of a record's bytes, for the request; a record intake
    /// took always reads.
    package static func read(_ record: [UInt8]) -> Result<OutboxFields, RecordProblem> {
        guard let fields = RecordFields(bytes: record) else { return .failure(.notAnObject) }
        do throws(RecordProblem) {
            guard let rawID = fields.field("id"), let text = fields.string(rawID), let id = RecordID(text) else {
                throw .badField("id", "is not an id")
            }
            let kind = fields.field("kind").flatMap(fields.string) ?? ""
            return .success(try OutboxFields(fields, id: id, kind: kind))
        } catch {
            return .failure(error)
        }
    }

    init(_ fields: RecordFields, id: RecordID, kind: String) throws(RecordProblem) {
        operation = try Self.operation(fields)
        entity = try Self.entity(fields, kind: kind)
        entityID = try Self.entityID(fields, id: id)
        precondition = operation.hasPrecondition ? try Self.precondition(fields) : nil
    }

    private static func operation(_ fields: RecordFields) throws(RecordProblem) -> RecordOperation {
        guard let raw = fields.field("op") else { return .create }
        // Compared as JSON reads it: "\u0055PDATE" is UPDATE to the server too.
        guard let text = fields.string(raw), let operation = RecordOperation(rawValue: text) else {
            throw .badField("op", "is \(shown(raw)); it must be \"CREATE\", \"UPDATE\" or \"DELETE\"")
        }
        return operation
    }

    private static func entity(_ fields: RecordFields, kind: String) throws(RecordProblem) -> String {
        guard let raw = fields.field("entity") else { return kind }
        guard let text = fields.string(raw), !text.isEmpty, text.utf8.count <= entityLimit,
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw .badField("entity", "is \(shown(raw)); it must be a name of 1–\(entityLimit) bytes, without controls")
        }
        return text
    }

    private static func entityID(_ fields: RecordFields, id: RecordID) throws(RecordProblem) -> RecordID {
        var named: [(field: String, id: RecordID)] = []
        for field in ["entity_id", "updates"] {
            guard let raw = fields.field(field) else { continue }
            guard let text = fields.string(raw) else {
                throw .badField(field, "is \(shown(raw)); it must be the id of the entity the record writes")
            }
            if let problem = RecordID.problem(with: text) { throw .badField(field, problem) }
            guard let entity = RecordID(text) else { throw .badField(field, "is not an id") }
            named.append((field, entity))
        }
        if named.count == 2 && named[0].id != named[1].id {
            throw .badField(
                "entity_id",
                "is \(named[0].id) but `updates` is \(named[1].id); they name the same entity, or one is left out")
        }
        return named.first?.id ?? id
    }

    /// An update or a delete sent without its version would be applied over
    /// whatever changed since (a lost update): a value that cannot be an
    /// entity tag is refused, not left out.
    private static func precondition(_ fields: RecordFields) throws(RecordProblem) -> String? {
        var tag: String?
        for field in ["version", "etag"] {
            guard let raw = fields.field(field) else { continue }
            let text: String?
            if raw.first == UInt8(ascii: "\"") {
                text = fields.string(raw)
            } else if let first = raw.first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first) {
                // A number is a version, sent as written: 5 is "5".
                text = String(decoding: raw, as: UTF8.self)
            } else {
                text = nil
            }
            guard let text, let value = EntityTagSyntax.headerValue(text) else {
                throw .badField(
                    field,
                    "is \(shown(raw)); an update or delete sends it as If-Match, so it must be a non-empty "
                        + "string or a number that makes an entity tag (printable, no `\"` inside, at most "
                        + "\(EntityTagSyntax.limit) bytes)")
            }
            // The etag, when both are given (read last).
            tag = value
        }
        return tag
    }

    /// A field's JSON as the reason shows it: its first 40 bytes.
    private static func shown(_ raw: ArraySlice<UInt8>) -> String {
        raw.count > 40 ? String(decoding: raw.prefix(40), as: UTF8.self) + "…" : String(decoding: raw, as: UTF8.self)
    }
}

/// RFC 9110 §8.8.3's entity-tag: `"opaque"` or `W/"opaque"`, the opaque
/// part of `%x21 / %x23-7E` and non-ASCII bytes.
package enum EntityTagSyntax {
    /// The longest value sent as `If-Match`.
    package static let limit = 256

    /// `text` as an entity tag: as it is when already quoted (or weak),
    /// otherwise quoted; nil when it cannot be one.
    package static func headerValue(_ text: String) -> String? {
        text.withUTF8Bytes { bytes in
            guard let (opaque, weak) = opaquePart(of: bytes) else { return nil }
            return (weak ? "W/\"" : "\"") + String(decoding: bytes[opaque], as: UTF8.self) + "\""
        }
    }

    /// Whether `headerValue(text)` is one, without building it: every etag
    /// of a batch answer is asked.
    package static func accepts(_ text: String) -> Bool {
        text.withUTF8Bytes { opaquePart(of: $0) != nil }
    }

    /// Where the opaque part of `bytes` is and whether the tag is weak,
    /// when the value made of them is an entity tag within `limit`.
    private static func opaquePart(of bytes: UnsafeBufferPointer<UInt8>) -> (opaque: Range<Int>, weak: Bool)? {
        let quote = UInt8(ascii: "\"")
        var opaque = 0..<bytes.count
        var weak = false
        if bytes.starts(with: #"W/""#.utf8), bytes.count >= 4, bytes.last == quote {
            weak = true
            opaque = 3..<(bytes.count - 1)
        } else if bytes.first == quote, bytes.count >= 2, bytes.last == quote {
            opaque = 1..<(bytes.count - 1)
        }
        guard !opaque.isEmpty, opaque.count + (weak ? 4 : 2) <= limit, bytes[opaque].allSatisfy(isOpaque) else {
            return nil
        }
        return (opaque, weak)
    }

    private static func isOpaque(_ byte: UInt8) -> Bool {
        byte == 0x21 || (0x23...0x7E).contains(byte) || byte >= 0x80
    }
}
