import CourierRecords

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

    /// One entry of `results[]`.
    package struct Result {
        package let status: String
        /// The entry's own JSON, for the ledger.
        package let text: String
    }

    /// `results[]` by idempotency key; nil when the answer has no such list.
    package static func results(in answer: [UInt8]) -> [String: Result]? {
        guard let list = JSONSplice.value(of: "results", in: answer), list.first == UInt8(ascii: "[") else {
            return nil
        }
        // Wrap the array so the object scanner can walk it as values.
        var found: [String: Result] = [:]
        for element in JSONSplice.arrayElements(list) {
            guard let key = JSONSplice.value(of: "idempotency_key", in: element).flatMap(JSONValidator.decodeString),
                let status = JSONSplice.value(of: "status", in: element).flatMap(JSONValidator.decodeString)
            else { continue }
            found[key] = Result(status: status, text: String(decoding: element, as: UTF8.self))
        }
        return found
    }

}

/// `"op": "UPDATE"` with an `etag` (or `version`) asks for optimistic
/// concurrency: the request carries `If-Match`, and 409/412 need attention.
package enum OptimisticConcurrency {
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
