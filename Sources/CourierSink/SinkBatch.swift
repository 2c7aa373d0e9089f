import CourierPosix
import CourierRecords

extension Sink {
    /// `POST /transactions/batch`: each item is stored like a single record,
    /// and `results[]` answers in the shape of the sync architecture: `OK`
    /// (stored or a repeat) with `server_id` (the entity's id here, `sink-`
    /// and the record it names) and its current `etag`; `CONFLICT` (the key
    /// was used with another body, or `if_match` failed, then with
    /// `current_etag`) or `ERROR` (not an item), each with a `message`. With
    /// `?atomic=true` nothing is stored unless every item would be `OK`, and
    /// the others are reported `ABORTED`.
    func batch(_ request: HTTPRequest, body: [UInt8]) -> HTTPResponse {
        // One pass checks the whole body and notes its items, their members
        // and their payloads' members (levels 0 to 4).
        guard let outline = JSONOutline(body, levels: 4), outline.kind(of: outline.root) == .object,
            let list = outline.member("items", of: outline.root), outline.kind(of: list) == .array
        else { return .json(400, #"{"error":"expected {\"items\":[…]}"}"#) }
        let atomic = request.target.contains("atomic=true")
        do {
            let results = try store.withLock { store throws(SystemError) -> [ItemResult] in
                try store.etags.refresh()
                var verdicts: [ItemResult] = []
                var pending = SinkStore.Pending()
                for item in outline.children(of: list) {
                    let keyText = outline.member("idempotency_key", of: item).flatMap(outline.string) ?? ""
                    guard let key = IdempotencyKey(keyText), let payload = outline.member("payload", of: item),
                        outline.kind(of: payload) == .object
                    else {
                        verdicts.append(.refused(keyText))
                        continue
                    }
                    let ifMatch = outline.member("if_match", of: item).flatMap(outline.string)
                    // The item names its entity (`client_id`), as the sync
                    // architecture's server finds it; else the payload does.
                    let entity =
                        outline.member("client_id", of: item).flatMap(outline.string).flatMap(EntityID.init)
                        ?? SinkStore.entity(of: payload, in: outline)
                    let verdict = try store.decide(
                        outline.value(of: payload), key: key, entity: entity, ifMatch: ifMatch, into: &pending)
                    verdicts.append(ItemResult(key: keyText, verdict: verdict, entity: entity))
                }
                if atomic && !verdicts.allSatisfy({ $0.status == "OK" }) {
                    return verdicts.map { $0.status == "OK" ? .aborted($0.key) : $0 }
                }
                try store.commit(pending)
                return verdicts
            }
            for result in results { note(result.key, result.status == "OK" ? 200 : 409) }
            var body = Array(#"{"results":["#.utf8)
            // An entry is about 100 bytes; a client's body of tiny items
            // must not reserve dozens of times its own size.
            body.reserveCapacity(min(results.count, 1_000) * 128)
            for (index, result) in results.enumerated() {
                if index > 0 { body.append(UInt8(ascii: ",")) }
                result.append(to: &body)
            }
            body += #"]}"#.utf8
            body.append(UInt8(ascii: "\n"))
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: body)
        } catch {
            return .json(503, #"{"error":"unable to store: \#(error)"}"#)
        }
    }

    /// One entry of `results[]`.
    struct ItemResult {
        let key: String
        let status: String
        var fields: [(name: String, value: String)] = []

        init(key: String, status: String, fields: [(name: String, value: String)] = []) {
            self.key = key
            self.status = status
            self.fields = fields
        }

        init(key: String, verdict: SinkStore.Verdict, entity: EntityID?) {
            switch verdict {
            case .stored(let etag), .duplicate(let etag?):
                self.init(key: key, status: "OK", fields: [("etag", etag)])
                if let entity { fields.insert(("server_id", "sink-\(entity)"), at: 0) }
            case .duplicate(nil):
                self.init(key: key, status: "OK", fields: entity.map { [("server_id", "sink-\($0)")] } ?? [])
            case .conflict:
                self.init(
                    key: key, status: "CONFLICT",
                    fields: [("message", "Idempotency-Key \(key) was used before with a different body")])
            case .preconditionFailed(let current):
                self.init(
                    key: key, status: "CONFLICT",
                    fields: [("message", "if_match does not match the current version")]
                        + (current.map { [("current_etag", $0)] } ?? []))
            }
        }

        static func refused(_ key: String) -> ItemResult {
            ItemResult(
                key: key, status: "ERROR",
                fields: [("message", "an item needs an idempotency_key and a JSON object payload")])
        }

        static func aborted(_ key: String) -> ItemResult {
            ItemResult(
                key: key, status: "ABORTED", fields: [("message", "atomic batch: another item was not OK")])
        }

        /// The entry as JSON, written into the answer's bytes: a String
        /// per member, joined, cost the sink more than the entry's reading.
        func append(to body: inout [UInt8]) {
            body += #"{"idempotency_key":"#.utf8
            JSONValidator.appendString(key, to: &body)
            body += #","status":"#.utf8
            JSONValidator.appendString(status, to: &body)
            for (name, value) in fields {
                body.append(UInt8(ascii: ","))
                JSONValidator.appendString(name, to: &body)
                body.append(UInt8(ascii: ":"))
                JSONValidator.appendString(value, to: &body)
            }
            body.append(UInt8(ascii: "}"))
        }
    }
}
