import CourierConfig
import CourierPosix
import CourierRecords
import Foundation

/// A deletion the server sent: a bare id, or an object with `id` and,
/// when the backend gives them, `deleted_at` and `version`.
struct Tombstone: Equatable {
    let id: String
    let deletedAt: String?
    let version: Int64?

    /// What the ledger keeps of it.
    var detail: String {
        ([deletedAt.map { "deleted_at=\($0)" }, version.map { "version=\($0)" }].compactMap { $0 })
            .joined(separator: " ")
    }

    /// Nil when `value` is neither an id nor an object with a string `id`.
    init?(_ value: Any) {
        if let id = value as? String {
            self.init(id: id, deletedAt: nil, version: nil)
        } else if let object = value as? [String: Any], let id = object["id"] as? String {
            self.init(
                id: id, deletedAt: object["deleted_at"] as? String,
                version: (object["version"] as? NSNumber)?.int64Value)
        } else {
            return nil
        }
    }

    init(id: String, deletedAt: String?, version: Int64?) {
        self.id = id
        self.deletedAt = deletedAt
        self.version = version
    }
}

/// One delta page as the server sent it.
struct CatalogPage {
    let raw: [UInt8]
    let upserts: [[String: Any]]
    let tombstones: [Tombstone]
    let nextCursor: String?
    /// Required when the catalog's cursor is the version.
    let version: Int64?
    /// RFC 3339, exactly as sent; required when the cursor is the server's time.
    let serverTime: String?

    /// Longer than any RFC 3339 time a server writes.
    static let serverTimeLimit = 64

    /// The names a page's cursor to the next page goes by: `next_cursor`,
    /// as the sync architecture writes it (`while delta.next_cursor !=
    /// null`), and `nextCursor`, as courier's own documents did.
    static let nextCursorNames = ["next_cursor", "nextCursor"]

    /// `page` (1 for the first of a sync) names the page in errors;
    /// `cursor` is the kind of cursor the sync keeps, which decides whether
    /// `version` or `server_time` must be there.
    static func parse(_ raw: [UInt8], catalog: Catalog, cursor: CatalogCursor, url: String, page: Int)
        throws(CatalogError) -> CatalogPage
    {
        func malformed(_ reason: String) -> CatalogError { .malformed(catalog: catalog.name.value, url: url, reason) }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(raw))) as? [String: Any] else {
            throw malformed("page \(page) is not a JSON object")
        }
        guard let upserts = (object["upserts"] ?? []) as? [[String: Any]] else {
            throw malformed("page \(page): upserts must be a list of objects")
        }
        guard let list = (object["tombstones"] ?? []) as? [Any] else {
            throw malformed("page \(page): tombstones must be a list")
        }
        var tombstones: [Tombstone] = []
        for (index, value) in list.enumerated() {
            guard let tombstone = Tombstone(value) else {
                throw malformed("page \(page), tombstone \(index + 1): expected an id or an object with a string `id`")
            }
            tombstones.append(tombstone)
        }
        let version = try Self.version(object["version"], cursor: cursor, page: page, malformed)
        let serverTime = try Self.serverTime(object["server_time"], cursor: cursor, page: page, malformed)
        let next = try Self.nextCursor(in: object, page: page, malformed)
        return CatalogPage(
            raw: raw, upserts: upserts, tombstones: tombstones, nextCursor: next, version: version,
            serverTime: serverTime)
    }

    /// The cursor to the next page, nil at the last one. A cursor of another
    /// type read as "no more pages" would end the sync early and move
    /// `since` past the pages never fetched; two spellings that disagree
    /// leave no way to know which pages come next.
    private static func nextCursor(
        in object: [String: Any], page: Int, _ malformed: (String) -> CatalogError
    ) throws(CatalogError) -> String? {
        var given: [(name: String, cursor: String?)] = []
        for name in nextCursorNames {
            switch object[name] {
            case nil: continue
            case is NSNull: given.append((name, nil))
            case let cursor as String: given.append((name, cursor))
            default: throw malformed("page \(page): \(name) must be a string or null")
            }
        }
        if let first = given.first, let other = given.dropFirst().first(where: { $0.cursor != first.cursor }) {
            throw malformed(
                "page \(page): \(first.name) \(Self.quoted(first.cursor)) and \(other.name) "
                    + "\(Self.quoted(other.cursor)) disagree")
        }
        return given.first?.cursor
    }

    /// A cursor as errors show it: quoted as JSON (a control byte cannot
    /// break the ledger line), its first 64 characters, or `null`.
    static func quoted(_ cursor: String?) -> String {
        guard let cursor else { return "null" }
        let shown = cursor.count > 64 ? String(cursor.prefix(64)) + "…" : cursor
        return String(decoding: JSONValidator.encodeString(shown), as: UTF8.self)
    }

    private static func version(
        _ value: Any?, cursor: CatalogCursor, page: Int, _ malformed: (String) -> CatalogError
    ) throws(CatalogError) -> Int64? {
        guard let value, !(value is NSNull) else {
            if cursor == .version { throw malformed("page \(page) has no numeric version") }
            return nil
        }
        // JSON true arrives as an NSNumber too (objCType "c"), and
        // `int64Value` would make 15.5 into 15 and 2^64 - 1 into -1: a cursor
        // the server never gave.
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c",
            let version = value as? Int64
        else { throw malformed("page \(page): version must be a whole number") }
        return version
    }

    private static func serverTime(
        _ value: Any?, cursor: CatalogCursor, page: Int, _ malformed: (String) -> CatalogError
    ) throws(CatalogError) -> String? {
        guard let value, !(value is NSNull) else {
            if cursor == .serverTime {
                throw malformed("page \(page) has no server_time, and the catalog's cursor is since = server-time")
            }
            return nil
        }
        guard let time = value as? String, time.utf8.count <= serverTimeLimit, Timestamp(rfc3339: time) != nil else {
            throw malformed("page \(page): server_time must be an RFC 3339 time")
        }
        return time
    }
}
