import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool
import Foundation
import Glibc

/// Where a catalog sync keeps what it fetched: `catalogs/NAME/ID.json`, the
/// page journal and, during a full sync, the ids seen so far, both in
/// `.courier/`. Each page is journalled, then applied, then the state
/// advances; a crash anywhere is repaired by replaying the journal
/// (upserts and deletes are idempotent).
struct CatalogStore {
    let spool: Spool
    let catalog: Catalog
    /// The kind of cursor the sync keeps (`Catalog.cursor(resuming:)`).
    let cursor: CatalogCursor
    let log: EventLog
    let ledger: Ledger
    let directory: DirectoryHandle

    init(spool: Spool, catalog: Catalog, cursor: CatalogCursor, log: EventLog, ledger: Ledger) throws(CatalogError) {
        self.spool = spool
        self.catalog = catalog
        self.cursor = cursor
        self.log = log
        self.ledger = ledger
        self.directory = try Self.catalogDirectory(spool, catalog)
    }

    private var journalName: FileName { FileName("catalog-\(catalog.name).page") }
    /// The ids a full sync in progress has applied (`SeenIDs`).
    private var seenName: FileName { FileName("catalog-\(catalog.name).seen") }

    /// A new sync starts with no ids seen.
    func forgetSeen() throws(CatalogError) {
        do { try spool.control.remove(seenName) } catch { throw .spool(SpoolError(error)) }
    }

    /// False when the full sync in progress noted its ids the way an older
    /// courier did, which cannot say which lines are whole ids.
    func seenIsCurrent() throws(CatalogError) -> Bool {
        let bytes: [UInt8]?
        do { bytes = try spool.controlFile(seenName.description, limit: SeenIDs.header.count) } catch {
            throw .spool(error)
        }
        return SeenIDs.isCurrent(bytes ?? [])
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
        if let page = try? CatalogPage.parse(raw, catalog: catalog, cursor: cursor, url: "journal", page: 0) {
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
        let applied = try apply(page, report: &report)
        if state.fullStartedAt != nil { try remember(applied) }
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

    /// The ids of the upserts it wrote.
    private func apply(_ page: CatalogPage, report: inout CatalogSyncReport)
        throws(CatalogError) -> [String]
    {
        var applied: [String] = []
        do throws(SpoolError) {
            for upsert in page.upserts {
                guard let id = (upsert["id"] as? String).flatMap(RecordID.init),
                    let data = try? JSONSerialization.data(withJSONObject: upsert, options: [.sortedKeys])
                else {
                    log(.warning, "catalog \(catalog.name): an upsert without a usable id was skipped")
                    report.skipped += 1
                    continue
                }
                try spool.deliverNewFile(
                    Array(data), named: FileName("\(id).json"), into: directory, syncDirectory: false)
                report.upserts += 1
                applied.append(id.value)
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
        return applied
    }

    /// A full sync notes every id it applied, durably, page by page: an
    /// upsert it skipped is not one the local copy holds.
    private func remember(_ ids: [String]) throws(CatalogError) {
        guard !ids.isEmpty else { return }
        do {
            let file = try spool.control.openFile(seenName, flags: O_RDWR | O_APPEND | O_CREAT, mode: 0o640)
            let size = try file.status().size
            let last = size > 0 ? try file.byte(at: size - 1) : nil
            try file.write(SeenIDs.appendix(ids, toFileOf: size, endingWith: last))
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
        guard let ids = SeenIDs.decode(seenBytes ?? []) else {
            throw .malformed(
                catalog: catalog.name.value, url: catalog.url,
                ".courier/\(seenName) is not in the format this courier writes; nothing was removed")
        }
        let seen = Set(ids.map { $0 + ".json" })
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
