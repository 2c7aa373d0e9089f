import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool
import Foundation
import Glibc

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

    /// `page` (1 for the first of a sync) names the page in errors.
    static func parse(_ raw: [UInt8], catalog: Catalog, url: String, page: Int) throws(CatalogError) -> CatalogPage {
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
        let version = try Self.version(object["version"], cursor: catalog.cursor, page: page, malformed)
        let serverTime = try Self.serverTime(object["server_time"], cursor: catalog.cursor, page: page, malformed)
        // A cursor of another type read as "no more pages" would end the
        // sync early and move `since` past the pages never fetched.
        let next: String?
        switch object["nextCursor"] {
        case nil, is NSNull: next = nil
        case let cursor as String: next = cursor
        default: throw malformed("page \(page): nextCursor must be a string or null")
        }
        return CatalogPage(
            raw: raw, upserts: upserts, tombstones: tombstones, nextCursor: next, version: version,
            serverTime: serverTime)
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

/// Where a catalog sync keeps what it fetched: `catalogs/NAME/ID.json`, the
/// page journal and, during a full sync, the ids seen so far, both in
/// `.courier/`. Each page is journalled, then applied, then the state
/// advances; a crash anywhere is repaired by replaying the journal
/// (upserts and deletes are idempotent).
struct CatalogStore {
    let spool: Spool
    let catalog: Catalog
    let log: EventLog
    let ledger: Ledger
    let directory: DirectoryHandle

    init(spool: Spool, catalog: Catalog, log: EventLog, ledger: Ledger) throws(CatalogError) {
        self.spool = spool
        self.catalog = catalog
        self.log = log
        self.ledger = ledger
        self.directory = try Self.catalogDirectory(spool, catalog)
    }

    private var journalName: FileName { FileName("catalog-\(catalog.name).page") }
    /// The ids a full sync in progress has received, one per line.
    private var seenName: FileName { FileName("catalog-\(catalog.name).seen") }

    /// A new sync starts with no ids seen.
    func forgetSeen() throws(CatalogError) {
        do { try spool.control.remove(seenName) } catch { throw .spool(SpoolError(error)) }
    }

    /// The page as fetched, before any of it is applied.
    func writeJournal(_ page: CatalogPage) throws(CatalogError) {
        do { try spool.writeControlFile(journalName.description, page.raw) } catch { throw .spool(error) }
    }

    /// A page fetched but perhaps not wholly applied when a sync died:
    /// apply it again (idempotently) and advance as the sync would have.
    func replayJournal(state: inout CatalogState) throws(CatalogError) {
        let journal: [UInt8]?
        do { journal = try spool.controlFile(journalName.description) } catch { throw .spool(error) }
        guard let raw = journal else { return }
        var ignored = CatalogSyncReport(session: RoundID(value: "replay"))
        // A journal is written whole (tmp/, fsync, rename), so one that does
        // not parse was changed by hand: it is dropped, and the sync goes on
        // from the saved cursor, which is still before that page.
        if let page = try? CatalogPage.parse(raw, catalog: catalog, url: "journal", page: 0) {
            try applyAndAdvance(page, state: &state, report: &ignored)
        } else {
            try removeJournal()
        }
    }

    /// Applies a journalled page, then moves the saved position past it, then
    /// drops the journal: in that order, so a crash anywhere is repaired by
    /// replaying the journal.
    func applyAndAdvance(_ page: CatalogPage, state: inout CatalogState, report: inout CatalogSyncReport)
        throws(CatalogError)
    {
        try apply(page, report: &report)
        if state.fullStartedAt != nil { try remember(page) }
        state.cursor = page.nextCursor
        state.version = page.version ?? state.version
        state.serverTime = page.serverTime ?? state.serverTime
        state.complete = page.nextCursor == nil
        do { try state.save(catalog.name, in: spool) } catch { throw .spool(error) }
        try removeJournal()
    }

    private func removeJournal() throws(CatalogError) {
        do { try spool.control.remove(journalName) } catch {
            throw .spool(SpoolError(error))
        }
    }

    private func apply(_ page: CatalogPage, report: inout CatalogSyncReport)
        throws(CatalogError)
    {
        do throws(SpoolError) {
            for upsert in page.upserts {
                guard let id = (upsert["id"] as? String).flatMap(RecordID.init),
                    let data = try? JSONSerialization.data(withJSONObject: upsert, options: [.sortedKeys])
                else {
                    log(.warning, "catalog \(catalog.name): an upsert without a usable id was skipped")
                    continue
                }
                try spool.deliverNewFile(
                    Array(data), named: FileName("\(id).json"), into: directory, syncDirectory: false)
                report.upserts += 1
            }
            var deleted: [LedgerLine] = []
            for tombstone in page.tombstones {
                guard let id = RecordID(tombstone.id) else { continue }
                do { try directory.remove(FileName("\(id).json")) } catch { throw SpoolError(error) }
                report.tombstones += 1
                deleted.append(
                    LedgerLine(
                        time: .now(), round: report.session.value, subscriber: catalog.name.value, key: id.value,
                        event: .catalogDeleted, detail: tombstone.detail))
            }
            try ledger.append(deleted)
            do { try directory.sync() } catch { throw SpoolError(error) }
        } catch {
            throw .spool(error)
        }
    }

    /// A full sync notes every id the server sent, durably, page by page.
    private func remember(_ page: CatalogPage) throws(CatalogError) {
        let ids = page.upserts.compactMap { $0["id"] as? String }
        guard !ids.isEmpty else { return }
        do {
            let file = try spool.control.openFile(seenName, flags: O_WRONLY | O_APPEND | O_CREAT, mode: 0o640)
            try file.write(Array((ids.joined(separator: "\n") + "\n").utf8))
            try file.sync()
        } catch {
            throw .spool(SpoolError(error))
        }
    }

    /// After a full sync, what the server no longer has: every local item
    /// whose id did not come in any page of it.
    func removeUnseen() throws(CatalogError) -> Int {
        // An unreadable list must fail the sync: read as empty, it would
        // remove every local item.
        let seenBytes: [UInt8]?
        do { seenBytes = try spool.controlFile(seenName.description, limit: Int.max) } catch { throw .spool(error) }
        let seen = Set(
            String(decoding: seenBytes ?? [], as: UTF8.self).split(separator: "\n").map { String($0) + ".json" })
        var removed = 0
        do {
            for name in try directory.sortedNames() where !seen.contains(name.description) {
                guard try directory.status(of: name)?.kind == .regular else { continue }
                try directory.remove(name)
                removed += 1
            }
            try directory.sync()
            try spool.control.remove(seenName)
        } catch {
            throw .spool(SpoolError(error))
        }
        return removed
    }

    /// `catalogs/NAME/`, created when missing; named in messages relative
    /// to the spool, like its folders.
    private static func catalogDirectory(_ spool: Spool, _ catalog: Catalog) throws(CatalogError) -> DirectoryHandle {
        do {
            try spool.root.makeDirectory(FileName("catalogs"), mode: 0o750)
            let catalogs = try spool.root.openDirectory(FileName("catalogs"), as: "catalogs")
            try catalogs.makeDirectory(FileName(catalog.name.value), mode: 0o750)
            return try catalogs.openDirectory(FileName(catalog.name.value))
        } catch {
            throw .spool(SpoolError(error))
        }
    }
}
