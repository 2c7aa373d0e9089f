import CourierIdentifiers
import CourierRecords
import CourierSupport

/// The batch wire format of docs/design.md §8:
/// `{"items":[{"idempotency_key","op","entity","client_id","payload"}],"device":{"id","app_version"}}`
/// and the answer's `results[]`.
package enum BatchBody {
    /// One item as it goes in a body:
    /// `{"idempotency_key":KEY,"op":OP,"entity":ENTITY,"client_id":ENTITY_ID[,"if_match":TAG],"payload":RECORD}`,
    /// the record spliced in as `payload` byte for byte, the rest from its
    /// `OutboxFields`.
    package struct Item {
        let key: String
        let record: [UInt8]
        let fields: OutboxFields

        package init(key: String, record: [UInt8], fields: OutboxFields) {
            self.key = key
            self.record = record
            self.fields = fields
        }

        /// The item's fields read from the record; nil when it does not
        /// read (intake would not have taken it).
        package init?(key: String, record: [UInt8]) {
            guard case .success(let fields) = OutboxFields.read(record) else { return nil }
            self.init(key: key, record: record, fields: fields)
        }

        /// The bytes it takes in a body, the comma between items aside:
        /// counted, not built (`BatchFit` sizes every item it adds).
        package var size: Int {
            var size = Self.opening.count + JSONValidator.encodedCount(key)
            size += Self.op.count + JSONValidator.encodedCount(fields.operation.rawValue)
            size += Self.entity.count + JSONValidator.encodedCount(fields.entity)
            size += Self.clientID.count + JSONValidator.encodedCount(fields.entityID.value)
            if let tag = fields.precondition { size += Self.ifMatch.count + JSONValidator.encodedCount(tag) }
            return size + Self.payload.count + record.count + 1
        }

        /// Written straight into the body: no array per member.
        func append(to body: inout [UInt8]) {
            body += Self.opening
            JSONValidator.appendString(key, to: &body)
            body += Self.op
            JSONValidator.appendString(fields.operation.rawValue, to: &body)
            body += Self.entity
            JSONValidator.appendString(fields.entity, to: &body)
            body += Self.clientID
            JSONValidator.appendString(fields.entityID.value, to: &body)
            if let tag = fields.precondition {
                body += Self.ifMatch
                JSONValidator.appendString(tag, to: &body)
            }
            body += Self.payload
            body += record
            body.append(UInt8(ascii: "}"))
        }

        private static let opening = Array(#"{"idempotency_key":"#.utf8)
        private static let op = Array(#","op":"#.utf8)
        private static let entity = Array(#","entity":"#.utf8)
        private static let clientID = Array(#","client_id":"#.utf8)
        private static let ifMatch = Array(#","if_match":"#.utf8)
        private static let payload = Array(#","payload":"#.utf8)
    }

    /// The body for these items.
    package static func encode(_ items: [Item], deviceID: String) -> [UInt8] {
        var body = Array(#"{"items":["#.utf8)
        body.reserveCapacity(size(of: items, deviceID: deviceID))
        for (index, item) in items.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            item.append(to: &body)
        }
        body += closing(deviceID: deviceID)
        return body
    }

    /// The exact length of `encode(items, deviceID:)`, without building it:
    /// what `max-batch-bytes` is held to.
    package static func size(of items: [Item], deviceID: String) -> Int {
        envelopeSize(deviceID: deviceID) + items.reduce(0) { $0 + $1.size } + max(0, items.count - 1)
    }

    /// A body's bytes besides its items.
    package static func envelopeSize(deviceID: String) -> Int {
        #"{"items":["#.utf8.count + closing(deviceID: deviceID).count
    }

    private static func closing(deviceID: String) -> [UInt8] {
        Array(#"],"device":{"id":"#.utf8) + JSONValidator.encodeString(deviceID)
            + Array(#","app_version":"#.utf8) + JSONValidator.encodeString(CourierVersion.current) + Array("}}".utf8)
    }

    /// A guess at the bytes one item adds besides its record and key, for
    /// deciding before an entry is claimed whether it may still fit; the
    /// claimed item's exact `size` decides.
    package static let overheadPerItem = 160

    /// One entry of `results[]`, in the shape of the offline-first sync
    /// architecture: `{"idempotency_key","status","server_id","etag"}` for
    /// `OK`, `{…,"status":"CONFLICT","message","current_etag"}`,
    /// `{…,"status":"ERROR","message"}`. Every field but the status is
    /// optional; an id or a tag may be a string or a number.
    package struct Result {
        package let status: String
        package var serverID: String?
        package var etag: String?
        /// The version the server holds, when it refused the one sent.
        package var currentETag: String?
        /// The server's words (`message`, else `error`).
        package var message: String?
        /// The entry's own JSON when it has a member courier does not read:
        /// without a message, the ledger keeps it, so nothing the server
        /// said is lost. Nil for an entry courier reads whole (nearly all).
        package var unread: String?

        package init(status: String) {
            self.status = status
        }

        /// Whether the entry has a member courier does not read.
        var hasUnknownMembers: Bool { unread != nil }

        /// The ledger's detail: `status=OK server_id=srv-123 etag=v2`,
        /// `status=CONFLICT current_etag=v5 message="version mismatch"`
        /// (docs/design.md §8), redacted and bounded value by value.
        package func ledgerDetail(redactor: Redactor) -> String {
            var fields: [(name: String, value: String)] = []
            fields.reserveCapacity(4)
            fields.append(("status", status))
            if let serverID { fields.append(("server_id", serverID)) }
            if let etag { fields.append(("etag", etag)) }
            if let currentETag { fields.append(("current_etag", currentETag)) }
            return DetailFields.format(fields, message: message ?? unread, redactor: redactor)
        }
    }

    /// `results[]` by idempotency key; nil when the answer is not one JSON
    /// value in UTF-8 or has no such list. Each entry is read once, member
    /// by member; a member named twice is read as its last.
    package static func results(in answer: [UInt8]) -> [String: Result]? {
        // One pass checks the whole answer (a server's text is not trusted
        // to be JSON) and notes the object, results[], each entry and each
        // entry's members: nothing is scanned or copied again.
        guard let outline = JSONOutline(answer, levels: 3),
            let list = outline.member("results", of: outline.root), outline.kind(of: list) == .array
        else { return nil }
        // No room reserved by the list's length: a hostile answer's millions
        // of elements that are no result would reserve it all the same.
        var found: [String: Result] = [:]
        for entry in outline.children(of: list) where outline.kind(of: entry) == .object {
            var members = ResultMembers()
            for member in outline.members(of: entry) { members.note(answer[member.name], member.value) }
            guard let key = members.key.flatMap({ string($0, in: outline) }),
                let status = members.status.flatMap({ string($0, in: outline) })
            else { continue }
            var result = Result(status: status)
            result.serverID = members.serverID.flatMap { scalar($0, in: outline) }
            result.etag = members.etag.flatMap { scalar($0, in: outline) }
            result.currentETag = members.currentETag.flatMap { scalar($0, in: outline) }
            result.message =
                members.message.flatMap { scalar($0, in: outline) } ?? members.error.flatMap { scalar($0, in: outline) }
            if members.hasUnknown {
                result.unread = String(decoding: answer[outline.nodes[entry].bytes], as: UTF8.self)
            }
            found[key] = result
        }
        return found
    }

    /// Where each member courier reads sits in one entry of `results[]`.
    private struct ResultMembers {
        var key: Range<Int>?
        var status: Range<Int>?
        var serverID: Range<Int>?
        var etag: Range<Int>?
        var currentETag: Range<Int>?
        var message: Range<Int>?
        var error: Range<Int>?
        var hasUnknown = false

        /// `name` as written, inside its quotes (an escaped name is not the
        /// member, as `JSONOutline.member` compares them); `value` where its
        /// value is. Compared byte for byte, name by name: a key path per
        /// member cost more than the rest of the entry's reading.
        mutating func note(_ name: ArraySlice<UInt8>, _ value: Range<Int>) {
            if name.elementsEqual("idempotency_key".utf8) {
                key = value
            } else if name.elementsEqual("status".utf8) {
                status = value
            } else if name.elementsEqual("server_id".utf8) {
                serverID = value
            } else if name.elementsEqual("etag".utf8) {
                etag = value
            } else if name.elementsEqual("current_etag".utf8) {
                currentETag = value
            } else if name.elementsEqual("message".utf8) {
                message = value
            } else if name.elementsEqual("error".utf8) {
                error = value
            } else {
                hasUnknown = true
            }
        }
    }

    /// A member's value that is a string; nil for anything else.
    private static func string(_ value: Range<Int>, in outline: JSONOutline) -> String? {
        guard outline.bytes[value.lowerBound] == UInt8(ascii: "\"") else { return nil }
        return outline.text(ofString: value)
    }

    /// A member's value that is a string, or a number as written; nil for
    /// anything else (null, an object, a list).
    private static func scalar(_ value: Range<Int>, in outline: JSONOutline) -> String? {
        let first = outline.bytes[value.lowerBound]
        if first == UInt8(ascii: "\"") { return outline.text(ofString: value) }
        guard first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
        return String(decoding: outline.bytes[value], as: UTF8.self)
    }
}

/// `"op": "UPDATE"` or `"DELETE"` with an `etag` (or `version`) asks for
/// optimistic concurrency: the request carries `If-Match`, and 409/412
/// need attention.
package enum OptimisticConcurrency {
    /// The entity a record writes: its `entity_id`, else the one it
    /// `updates`, else itself. The etag a server gives for it is kept under
    /// this id (the spool's `EntityTagStore`).
    package static func entity(of record: [UInt8]) -> RecordID? {
        guard case .success(let fields) = OutboxFields.read(record) else { return nil }
        return fields.entityID
    }
}
