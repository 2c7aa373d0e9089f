import Foundation

@testable import CourierRecords
@testable import CourierSink
@testable import CourierSupport

/// A backend written from the sync architecture's text alone, not from
/// courier's code or documents: its catalog endpoint
/// `GET /catalogs/{name}/delta?since=ISO8601&cursor=…&pageSize=…` answers
/// `{upserts, tombstones, server_time, version, next_cursor}`, its
/// acknowledgement takes `{"device_id", "catalog", "version"}`, and its
/// batch endpoint takes items `{"idempotency_key", "op", "entity",
/// "client_id", "payload"}` and answers `results[]` with `OK`, `CONFLICT`
/// or `ERROR`. Each test scripts its pages and results.
enum ArchitectureBackend {
    /// One delta page in the architecture's shape. Upserts are objects with
    /// an `id` (written as JSON, so a test can send ids no file name can
    /// hold), tombstones objects with `id` and `deleted_at`.
    static func page(
        upserts: [String], tombstones: [String] = [], serverTime: String, version: Int, nextCursor: String?
    ) -> String {
        let items = upserts.map { #"{"id": \#(json($0)), "name": "Item \#($0.count)", "price": 22.5}"# }
        let deleted = tombstones.map { #"{"id": \#(json($0)), "deleted_at": "2025-10-01T00:00:00Z"}"# }
        return """
            {"upserts": [\(items.joined(separator: ", "))], "tombstones": [\(deleted.joined(separator: ", "))],
             "server_time": "\(serverTime)", "version": \(version), "next_cursor": \(nextCursor.map(json) ?? "null")}
            """
    }

    /// A JSON string literal.
    static func json(_ text: String) -> String { String(decoding: JSONValidator.encodeString(text), as: UTF8.self) }

    /// A catalog backend: the page for each cursor asked (nil: the first
    /// page), `{"ok": true}` to each acknowledgement. After `limit` page
    /// requests it answers 500, so a client that never stops ends anyway.
    static func catalog(limit: Int = 50, pages: @escaping @Sendable (_ cursor: String?) -> String) throws
        -> LoopbackServer
    {
        let asked = Locked(0)
        return try LoopbackServer { request, _ in
            guard request.method == "GET" else { return .respond(.json(200, #"{"ok": true}"#)) }
            let count = asked.withLock { count -> Int in
                count += 1
                return count
            }
            guard count <= limit else { return .respond(.json(500, #"{"error": "too many pages"}"#)) }
            return .respond(.json(200, pages(query(request.target)["cursor"])))
        }
    }

    /// The query parameters of a request target, decoded, in order.
    static func parameters(_ target: String) -> [(name: String, value: String)] {
        guard let mark = target.firstIndex(of: "?") else { return [] }
        return target[target.index(after: mark)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            return (parts[0], (parts.count > 1 ? parts[1] : "").removingPercentEncoding ?? "")
        }
    }

    static func query(_ target: String) -> [String: String] {
        Dictionary(parameters(target).map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The batch items a request carried, each as the JSON object it is.
    static func items(of request: HTTPRequest) -> [[String: Any]] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return []
        }
        return object["items"] as? [[String: Any]] ?? []
    }

    /// An outbox backend: `status(item)` for each item (`OK` by default),
    /// with the architecture's `server_id` and `etag` for an `OK`.
    static func outbox(status: @escaping @Sendable ([String: Any]) -> String = { _ in "OK" }) throws
        -> LoopbackServer
    {
        try LoopbackServer { request, _ in
            let results = items(of: request).map { item -> String in
                let key = json(item["idempotency_key"] as? String ?? "")
                switch status(item) {
                case "OK": return #"{"idempotency_key": \#(key), "status": "OK", "server_id": "srv-123", "etag": "v2"}"#
                case "CONFLICT":
                    return #"{"idempotency_key": \#(key), "status": "CONFLICT", "message": "version mismatch", "#
                        + #""current_etag": "v5"}"#
                case let other:
                    return #"{"idempotency_key": \#(key), "status": "\#(other)", "message": "invalid price"}"#
                }
            }
            return .respond(.json(200, #"{"results": [\#(results.joined(separator: ", "))]}"#))
        }
    }
}
