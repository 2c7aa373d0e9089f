import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierRecords
import CourierSpool
import Foundation
import Glibc

/// Where a catalog sync keeps what it fetched: `catalogs/NAME/ID.json`, the
/// page journal and, during a full sync, the ids applied so far, both in
/// `.courier/`. Each page is journalled, then applied in one transition
/// that also advances the state and drops the journal; a crash anywhere is
/// repaired by replaying the journal (upserts and deletes are idempotent).
struct CatalogStore {
    let session: SpoolSession
    let catalog: Catalog
    /// The kind of cursor the sync keeps (`Catalog.cursor(resuming:)`).
    let cursor: CatalogCursor
    let log: EventLog
    let directory: DirectoryHandle

    init(session: SpoolSession, catalog: Catalog, cursor: CatalogCursor, log: EventLog) throws(CatalogError) {
        self.session = session
        self.catalog = catalog
        self.cursor = cursor
        self.log = log
        do { directory = try session.folder(.catalog(catalog.name)) } catch { throw .spool(error) }
    }

    private var journalName: FileName { FileName("catalog-\(catalog.name).page") }
    /// The ids a full sync in progress has applied (`SeenIDs`).
    private var seenName: FileName { FileName("catalog-\(catalog.name).seen") }

    private func commit(_ transition: Transition) throws(CatalogError) {
        do { try session.commit(transition) } catch { throw .spool(error) }
    }

    /// A new sync starts with no ids seen.
    func forgetSeen() throws(CatalogError) {
        try commit(Transition(removals: [.init(seenName, in: .control)]))
    }

    /// False when the full sync in progress noted its ids the way an older
    /// courier did, which cannot say which lines are whole ids.
    func seenIsCurrent() throws(CatalogError) -> Bool {
        let bytes: [UInt8]?
        do { bytes = try session.spool.controlFile(seenName.description, limit: SeenIDs.header.count) } catch {
            throw .spool(error)
        }
        return SeenIDs.isCurrent(bytes ?? [])
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
        if let page = try? CatalogPage.parse(raw, catalog: catalog, cursor: cursor, url: "journal", page: 0) {
            try applyAndAdvance(page, state: &state, report: &ignored)
        } else {
            try commit(Transition(removals: [.init(journalName, in: .control)]))
        }
    }

    /// Applies a journalled page, moves the saved position past it and
    /// drops the journal, in one transition: the items and their
    /// `catalogDeleted` lines, the ids a full sync has applied, the state,
    /// then the journal's removal. A crash anywhere is repaired by replaying
    /// the journal.
    func applyAndAdvance(_ page: CatalogPage, state: inout CatalogState, report: inout CatalogSyncReport)
        throws(CatalogError)
    {
        var transition = Transition()
        var applied: [String] = []
        var skipped = 0
        for upsert in page.upserts {
            guard let id = (upsert["id"] as? String).flatMap(RecordID.init),
                let data = try? JSONSerialization.data(withJSONObject: upsert, options: [.sortedKeys])
            else {
                log(.warning, "catalog \(catalog.name): an upsert without a usable id was skipped")
                skipped += 1
                continue
            }
            transition.newFiles.append(
                .init(Array(data), as: FileName("\(id).json"), in: .catalog(catalog.name), replacing: true))
            applied.append(id.value)
        }
        var tombstones = 0
        for tombstone in page.tombstones {
            guard let id = RecordID(tombstone.id) else { continue }
            transition.lines.append(
                LedgerLine(
                    time: .now(), actor: .round(report.session), subscriber: catalog.name, key: id.value,
                    event: .catalogDeleted, detail: tombstone.detail))
            transition.removals.append(.init(FileName("\(id).json"), in: .catalog(catalog.name)))
            tombstones += 1
        }
        // A full sync notes every id it applied, durably, page by page: an
        // upsert it skipped is not one the local copy holds.
        if state.fullStartedAt != nil && !applied.isEmpty {
            transition.appends.append(.init(try seenAppendix(applied), to: seenName, in: .control))
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
        report.skipped += skipped
        report.tombstones += tombstones
    }

    /// The lines that note `ids` in the seen file as it is now (a new
    /// file gets the header; one a crash left torn, a newline first).
    private func seenAppendix(_ ids: [String]) throws(CatalogError) -> [UInt8] {
        do {
            let file = try session.spool.control.openFile(seenName, flags: O_RDONLY)
            let size = try file.status().size
            return SeenIDs.appendix(ids, toFileOf: size, endingWith: size > 0 ? try file.byte(at: size - 1) : nil)
        } catch let error where error.errno == .noSuchFile {
            return SeenIDs.appendix(ids, toFileOf: 0, endingWith: nil)
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
        do { seenBytes = try session.spool.controlFile(seenName.description, limit: Int.max) } catch {
            throw .spool(error)
        }
        guard let ids = SeenIDs.decode(seenBytes ?? []) else {
            throw .malformed(
                catalog: catalog.name.value, url: catalog.url,
                ".courier/\(seenName) is not in the format this courier writes; nothing was removed")
        }
        let seen = Set(ids.map { $0 + ".json" })
        var transition = Transition()
        do {
            for name in try directory.sortedNames() where !seen.contains(name.description) {
                guard try directory.status(of: name)?.kind == .regular else { continue }
                transition.removals.append(.init(name, in: .catalog(catalog.name)))
            }
        } catch {
            throw .spool(SpoolError(error))
        }
        // The seen ids stay until the state that ends the full sync is
        // saved (`saveEnding`): a crash before that resumes this sync, and
        // the resumed removal must read the same ids, not an empty list.
        try commit(transition)
        return transition.removals.count
    }

    /// Saves the state a sync ends with; a full sync's seen ids go with it,
    /// after it (a crash between leaves a list the next full sync forgets).
    func saveEnding(_ state: CatalogState, full: Bool) throws(CatalogError) {
        try commit(
            Transition(removals: full ? [.init(seenName, in: .control)] : [], newFiles: [state.file(catalog.name)]))
    }
}
