import CourierRecords
import CourierSpool
import CourierSupport

/// The batch wire format of docs/design.md §8:
/// `{"items":[{"idempotency_key","op","entity","client_id","payload"}],"device":{"id","app_version"}}`
/// and the answer's `results[]`.
package enum BatchBody {
    /// The body for these entries; each record is spliced in as `payload`
    /// byte for byte. `op` is the record's `op` (default `CREATE`), `entity`
    /// its `entity` (default its `kind`); an `etag` or `version` is passed
    /// on as `if_match`.
    package static func encode(_ items: [(key: String, record: [UInt8])], deviceID: String) -> [UInt8] {
        var body = Array(#"{"items":["#.utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            let op = JSONSplice.value(of: "op", in: item.record) ?? Array(#""CREATE""#.utf8)
            let entity =
                JSONSplice.value(of: "entity", in: item.record) ?? JSONSplice.value(of: "kind", in: item.record)
                ?? Array("null".utf8)
            let clientID = JSONSplice.value(of: "id", in: item.record) ?? Array("null".utf8)
            body += Array(#"{"idempotency_key":"#.utf8) + JSONValidator.encodeString(item.key)
            body += Array(#","op":"#.utf8) + op + Array(#","entity":"#.utf8) + entity
            body += Array(#","client_id":"#.utf8) + clientID
            if let tag = OptimisticConcurrency.ifMatch(for: item.record) {
                body += Array(#","if_match":"#.utf8) + JSONValidator.encodeString(tag)
            }
            body += Array(#","payload":"#.utf8) + item.record + [UInt8(ascii: "}")]
        }
        body += Array(#"],"device":{"id":"#.utf8) + JSONValidator.encodeString(deviceID)
        body += Array(#","app_version":"#.utf8) + JSONValidator.encodeString(CourierVersion.current) + Array("}}".utf8)
        return body
    }

    /// The fixed bytes one item adds besides its key and record, for
    /// `max-batch-bytes` planning.
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
        /// The entry's own JSON, for the ledger when it says nothing else
        /// courier knows how to read.
        package let text: String

        package init(status: String, text: String) {
            self.status = status
            self.text = text
        }

        /// The members courier reads; anything else is shown as the raw text.
        static let known: Set<String> = [
            "idempotency_key", "status", "server_id", "etag", "current_etag", "message", "error",
        ]

        /// The ledger's detail: `status=OK server_id=srv-123 etag=v2`,
        /// `status=CONFLICT current_etag=v5 message="version mismatch"`
        /// (docs/design.md §8), redacted and bounded value by value.
        package func ledgerDetail(redactor: Redactor) -> String {
            var fields = [(name: "status", value: status)]
            if let serverID { fields.append(("server_id", serverID)) }
            if let etag { fields.append(("etag", etag)) }
            if let currentETag { fields.append(("current_etag", currentETag)) }
            return DetailFields.format(fields, message: message ?? extra, redactor: redactor)
        }

        /// Without a message, members courier does not know are kept as the
        /// entry's text, so nothing the server said is lost.
        private var extra: String? {
            let bytes = Array(text.utf8)
            guard let object = JSONSplice.object(at: 0, in: bytes),
                object.members.contains(where: { !Self.known.contains(String(decoding: $0.name, as: UTF8.self)) })
            else { return nil }
            return text
        }
    }

    /// `results[]` by idempotency key; nil when the answer has no such list.
    package static func results(in answer: [UInt8]) -> [String: Result]? {
        guard let list = JSONSplice.value(of: "results", in: answer), list.first == UInt8(ascii: "[") else {
            return nil
        }
        var found: [String: Result] = [:]
        for element in JSONSplice.arrayElements(list) {
            guard let key = JSONSplice.value(of: "idempotency_key", in: element).flatMap(JSONValidator.decodeString),
                let status = JSONSplice.value(of: "status", in: element).flatMap(JSONValidator.decodeString)
            else { continue }
            var result = Result(status: status, text: String(decoding: element, as: UTF8.self))
            result.serverID = scalar("server_id", in: element)
            result.etag = scalar("etag", in: element)
            result.currentETag = scalar("current_etag", in: element)
            result.message = scalar("message", in: element) ?? scalar("error", in: element)
            found[key] = result
        }
        return found
    }

    /// A member that is a string, or a number as written; nil for anything
    /// else (null, an object, a list).
    private static func scalar(_ name: String, in element: [UInt8]) -> String? {
        guard let value = JSONSplice.value(of: name, in: element), let first = value.first else { return nil }
        if first == UInt8(ascii: "\"") { return JSONValidator.decodeString(value) }
        guard first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
        return String(decoding: value, as: UTF8.self)
    }
}

/// `"op": "UPDATE"` with an `etag` (or `version`) asks for optimistic
/// concurrency: the request carries `If-Match`, and 409/412 need attention.
package enum OptimisticConcurrency {
    /// The entity a record writes: the one it `updates`, else itself. The
    /// etag a server gives for it is kept under this id (`EntityTagStore`).
    package static func entity(of record: [UInt8]) -> RecordID? {
        (JSONSplice.value(of: "updates", in: record) ?? JSONSplice.value(of: "id", in: record))
            .flatMap(JSONValidator.decodeString).flatMap(RecordID.init)
    }

    package static func ifMatch(for record: [UInt8]) -> String? {
        // Most records are not updates: a byte search spares the scan.
        guard contains(record, #""UPDATE""#) else { return nil }
        guard JSONSplice.value(of: "op", in: record) == Array(#""UPDATE""#.utf8) else { return nil }
        if let etag = JSONSplice.value(of: "etag", in: record).flatMap(JSONValidator.decodeString), !etag.isEmpty {
            // An entity tag is quoted on the wire; a weak one keeps its W/.
            return etag.hasPrefix("\"") || etag.hasPrefix("W/\"") ? etag : "\"\(etag)\""
        }
        if let version = JSONSplice.value(of: "version", in: record) {
            let text = JSONValidator.decodeString(version) ?? String(decoding: version, as: UTF8.self)
            return "\"\(text)\""
        }
        return nil
    }

    private static func contains(_ bytes: [UInt8], _ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard bytes.count >= count, count > 0 else { return false }
        let first = needle.utf8Start[0]
        return bytes.withUnsafeBufferPointer { haystack in
            var index = 0
            while index <= haystack.count - count {
                if haystack[index] == first {
                    var offset = 1
                    while offset < count && haystack[index + offset] == needle.utf8Start[offset] { offset += 1 }
                    if offset == count { return true }
                }
                index += 1
            }
            return false
        }
    }
}
