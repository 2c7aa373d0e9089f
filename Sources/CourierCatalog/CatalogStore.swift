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
/// page journal and, during a full sync, the ids applied so far, both in
/// `.courier/`. Each page is journalled, then applied in one transition
/// that also advances the state and drops the journal; a crash anywhere is
/// repaired by replaying the journal (upserts and deletes are idempotent).
struct CatalogStore {
    let session: SpoolSession
    let catalog: Catalog
    let log: EventLog
    let directory: DirectoryHandle

    init(session: SpoolSession, catalog: Catalog, log: EventLog) throws(CatalogError) {
        self.session = session
        self.catalog = catalog
        self.log = log
        do { directory = try session.folder(.catalog(catalog.name)) } catch { throw .spool(error) }
    }

    private var journalName: FileName { FileName("catalog-\(catalog.name).page") }
    /// The ids a full sync in progress has applied, one per line (record
    /// ids hold no newline).
    private var seenName: FileName { FileName("catalog-\(catalog.name).seen") }

    private func commit(_ transition: Transition) throws(CatalogError) {
        do { try session.commit(transition) } catch { throw .spool(error) }
    }

    /// A new sync starts with no ids seen.
    func forgetSeen() throws(CatalogError) {
        try commit(Transition(removals: [.init(seenName, in: .control)]))
    }

    /// The page as fetched, before any of it is applied.
    func writeJournal(_ page: CatalogPage) throws(CatalogError) {
        try commit(Transition(newFiles: [.init(page.raw, as: journalName, in: .control, replacing: true)]))
    }

    /// A page fetched but perhaps not wholly applied when a sync died:
    /// apply it again (idempotently) and advance as the sync would have.
    func replayJournal(state: inout CatalogState) throws(CatalogError) {
        let journal: [UInt8]?
        do { journal = try session.spool.controlFile(journalName.description) } catch { throw .spool(error) }
        guard let raw = journal else { return }
        var ignored = CatalogSyncReport(session: RoundID(value: "replay"))
        // A journal is written whole (tmp/, fsync, rename), so one that does
        // not parse was changed by hand: it is dropped, and the sync goes on
        // from the saved cursor, which is still before that page.
        if let page = try? CatalogPage.parse(raw, catalog: catalog, url: "journal", page: 0) {
            try applyAndAdvance(page, state: &state, report: &ignored)
        } else {
            try commit(Transition(removals: [.init(journalName, in: .control)]))
        }
    }

    /// Applies a journalled page, moves the saved position past it and
    /// drops the journal, in one transition: the items and their
    /// `catalogDeleted` lines, the state, then the journal's removal. A
    /// crash anywhere is repaired by replaying the journal.
    func applyAndAdvance(_ page: CatalogPage, state: inout CatalogState, report: inout CatalogSyncReport)
        throws(CatalogError)
    {
        var transition = Transition()
        var applied: [RecordID] = []
        for upsert in page.upserts {
            guard let id = (upsert["id"] as? String).flatMap(RecordID.init),
                let data = try? JSONSerialization.data(withJSONObject: upsert, options: [.sortedKeys])
            else {
                log(.warning, "catalog \(catalog.name): an upsert without a usable id was skipped")
                continue
            }
            transition.newFiles.append(
                .init(Array(data), as: FileName("\(id).json"), in: .catalog(catalog.name), replacing: true))
            applied.append(id)
        }
        for tombstone in page.tombstones {
            guard let id = RecordID(tombstone.id) else { continue }
            transition.lines.append(
                LedgerLine(
                    time: .now(), round: report.session.value, subscriber: catalog.name.value, key: id.value,
                    event: .catalogDeleted, detail: tombstone.detail))
            transition.removals.append(.init(FileName("\(id).json"), in: .catalog(catalog.name)))
        }
        // A full sync notes every id it applied, durably, page by page.
        if state.fullStartedAt != nil && !applied.isEmpty {
            transition.appends.append(
                .init(Array(applied.map { $0.value + "\n" }.joined().utf8), to: seenName, in: .control))
        }
        var advanced = state
        advanced.cursor = page.nextCursor
        advanced.version = page.version ?? state.version
        advanced.serverTime = page.serverTime ?? state.serverTime
        advanced.complete = page.nextCursor == nil
        transition.newFiles.append(advanced.file(catalog.name))
        transition.removals.append(.init(journalName, in: .control))
        try commit(transition)
        state = advanced
        report.upserts += applied.count
        report.tombstones += page.tombstones.count { RecordID($0.id) != nil }
    }

    /// After a full sync, what the server no longer has: every local item
    /// whose id did not come in any page of it.
    func removeUnseen() throws(CatalogError) -> Int {
        // An unreadable list must fail the sync: read as empty, it would
        // remove every local item.
        let seenBytes: [UInt8]?
        do { seenBytes = try session.spool.controlFile(seenName.description, limit: Int.max) } catch {
            throw .spool(error)
        }
        let seen = Set(
            String(decoding: seenBytes ?? [], as: UTF8.self).split(separator: "\n").map { String($0) + ".json" })
        var transition = Transition()
        do {
            for name in try directory.sortedNames() where !seen.contains(name.description) {
                guard try directory.status(of: name)?.kind == .regular else { continue }
                transition.removals.append(.init(name, in: .catalog(catalog.name)))
            }
        } catch {
            throw .spool(SpoolError(error))
        }
        let removed = transition.removals.count
        transition.removals.append(.init(seenName, in: .control))
        try commit(transition)
        return removed
    }
}
