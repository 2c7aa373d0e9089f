import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool
import CourierSupport
import CourierTransport
import Foundation
import Glibc

/// What one `courier catalog sync` did.
public struct CatalogSyncReport: Sendable {
    public var session: RoundID
    public var full = false
    public var resumed = false
    public var pages = 0
    public var upserts = 0
    public var tombstones = 0
    public var removedByFullSync = 0
    public var version: Int64 = 0
    public var durationMilliseconds: Int64 = 0
}

public enum CatalogError: Error, Sendable, CustomStringConvertible {
    case http(catalog: String, url: String, status: Int, answer: String)
    case transport(catalog: String, url: String, CurlError)
    case malformed(catalog: String, url: String, String)
    case spool(SpoolError)

    public var description: String {
        switch self {
        case .http(let catalog, let url, let status, let answer):
            return "catalog \(catalog): \(Redactor.displayURL(url)) answered HTTP \(status): \(answer)"
        case .transport(let catalog, let url, let error):
            return "catalog \(catalog): \(Redactor.displayURL(url)): \(error)"
        case .malformed(let catalog, let url, let reason):
            return "catalog \(catalog): \(Redactor.displayURL(url)): \(reason)"
        case .spool(let error): return error.description
        }
    }
}

/// Pulls a catalog's deltas page by page into `spool/catalogs/NAME/ID.json`
/// (docs/design.md §8). The server wins: its upserts replace local files, its
/// tombstones delete them. Each page is first written to a journal in
/// `.courier/`, then applied, then the state advances; a crash anywhere
/// resumes by replaying the journal (upserts and deletes are idempotent)
/// and going on from the saved cursor: nothing lost, nothing applied twice
/// to any effect.
public struct CatalogSync {
    let spool: Spool
    let configuration: Configuration
    let catalog: Catalog
    let log: EventLog

    /// After this many failed syncs in a row the next one is full.
    public static let failuresBeforeFullSync = 3
    static let timeout: Duration = .seconds(60)

    public init(spool: Spool, configuration: Configuration, catalog: Catalog, log: EventLog = .silent) {
        self.spool = spool
        self.configuration = configuration
        self.catalog = catalog
        self.log = log
    }

    private var journalName: FileName { FileName("catalog-\(catalog.name).page") }
    /// The ids a full sync in progress has received, one per line.
    private var seenName: FileName { FileName("catalog-\(catalog.name).seen") }

    public func run(full requested: Bool) throws(CatalogError) -> CatalogSyncReport {
        let lockFile: FileDescriptor
        do {
            lockFile = try spool.control.openFile(
                FileName("catalog-\(catalog.name).lock"), flags: O_RDWR | O_CREAT, mode: 0o640)
            _ = try lockFile.lockExclusively(wait: true)
        } catch {
            throw .spool(SpoolError(error))
        }
        return try withExtendedLifetime(lockFile) { () throws(CatalogError) -> CatalogSyncReport in
            try runLocked(full: requested)
        }
    }

    private func runLocked(full requested: Bool) throws(CatalogError) -> CatalogSyncReport {
        let started = MonotonicInstant.now()
        var report = CatalogSyncReport(session: RoundID.make(at: .now()))
        let ledger = Ledger(directory: spool.ledgerDirectory, log: log, redactor: configuration.redactor)
        let directory = try catalogDirectory()
        var state: CatalogState
        do { state = try CatalogState.load(catalog.name, in: spool) } catch { throw .spool(error) }
        do throws(CatalogError) {
            try replayJournal(into: directory, state: &state)
            let wantsFull = requested || state.failures >= Self.failuresBeforeFullSync || state.since == nil
            if state.syncing == nil || (wantsFull && state.fullStartedAt == nil) {
                state.syncing = wantsFull ? 0 : state.since
                state.cursor = nil
                state.complete = false
                do { try spool.control.remove(seenName) } catch {
                    throw .spool(SpoolError(error))
                }
                state.fullStartedAt = wantsFull ? Timestamp.now().rfc3339 : nil
                try save(state)
            } else {
                report.resumed = true
            }
            report.full = state.fullStartedAt != nil
            let fields: [HTTPHeaderField]
            do { fields = try headers(session: report.session) } catch {
                throw .malformed(catalog: catalog.name.value, url: catalog.url, error.description)
            }
            let options = CurlOptions(timeout: Self.timeout, caFile: catalog.caFile)
            let fetch = HTTPFetch(options: options, headers: fields)
            while !state.complete {
                let page = try fetchPage(fetch, since: state.syncing ?? 0, cursor: state.cursor)
                try writeJournal(page)
                try applyAndAdvance(page, into: directory, state: &state, report: &report)
                report.pages += 1
            }
            if state.fullStartedAt != nil {
                report.removedByFullSync = try removeUnseen(in: directory)
            }
            report.version = state.version ?? state.syncing ?? 0
            state.since = report.version
            state.syncing = nil
            state.cursor = nil
            state.complete = false
            state.fullStartedAt = nil
            try acknowledge(fetch, version: report.version)
            report.durationMilliseconds = (MonotonicInstant.now() - started).milliseconds
            state.failures = 0
            state.lastError = nil
            state.lastSuccess = Timestamp.now().rfc3339
            state.lastDurationMilliseconds = report.durationMilliseconds
            try save(state)
            // The sync is applied and saved; a ledger line that cannot be
            // written must not turn it into a failure (and a full-sync retry).
            try? ledger.append(
                LedgerLine(
                    time: .now(), round: report.session.value, subscriber: catalog.name.value, key: "catalog",
                    event: .catalogSynced, status: 200, attempt: report.pages,
                    durationMilliseconds: report.durationMilliseconds,
                    detail:
                        "\(report.full ? "full" : "delta") sync to version \(report.version): \(report.upserts) upserts, "
                        + "\(report.tombstones) tombstones in \(report.pages) pages"
                        + (report.removedByFullSync > 0 ? ", \(report.removedByFullSync) removed" : "")))
            return report
        } catch {
            state.failures += 1
            state.lastError = error.description
            // The sync's own error is the one to report; a spool that cannot
            // take the failure count or the line fails the same way again.
            try? save(state)
            var status = 0
            if case .http(_, _, let code, _) = error { status = code }
            try? ledger.append(
                LedgerLine(
                    time: .now(), round: report.session.value, subscriber: catalog.name.value, key: "catalog",
                    event: .catalogFailed, status: status, attempt: report.pages,
                    durationMilliseconds: (MonotonicInstant.now() - started).milliseconds,
                    detail: "failure \(state.failures) in a row: \(error.description)"))
            throw error
        }
    }

    private func headers(session: RoundID) throws(HeaderFieldError) -> [HTTPHeaderField] {
        var fields = [
            try HTTPHeaderField(name: "User-Agent", value: "courier/\(CourierVersion.current)"),
            try HTTPHeaderField(name: "Courier-Device", value: configuration.deviceID),
            try HTTPHeaderField(name: "Courier-Session", value: session.value),
            try HTTPHeaderField(name: "Accept", value: "application/json"),
        ]
        if let token = catalog.token {
            fields.append(try HTTPHeaderField(name: "Authorization", value: "Bearer \(token)"))
        }
        return fields
    }

    private func save(_ state: CatalogState) throws(CatalogError) {
        do { try state.save(catalog.name, in: spool) } catch { throw .spool(error) }
    }

    // MARK: pages

    struct Page {
        let raw: [UInt8]
        let upserts: [[String: Any]]
        let tombstones: [String]
        let nextCursor: String?
        let version: Int64
    }

    private func fetchPage(_ fetch: HTTPFetch, since: Int64, cursor: String?) throws(CatalogError) -> Page {
        var url = "\(catalog.url)/delta?since=\(since)&pageSize=\(catalog.pageSize)"
        if let cursor {
            url +=
                "&cursor="
                + (cursor.addingPercentEncoding(
                    withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+"))) ?? cursor)
        }
        let answer: HTTPFetch.Answer
        do { answer = try fetch.get(url) } catch { throw .transport(catalog: catalog.name.value, url: url, error) }
        guard (200...299).contains(answer.status) else {
            throw .http(
                catalog: catalog.name.value, url: url, status: answer.status,
                answer: configuration.redactor.excerpt(answer.body, limit: LedgerLine.detailLimit))
        }
        return try Self.parse(answer.body, catalog: catalog.name.value, url: url)
    }

    static func parse(_ raw: [UInt8], catalog: String, url: String) throws(CatalogError) -> Page {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(raw))) as? [String: Any] else {
            throw .malformed(catalog: catalog, url: url, "the page is not a JSON object")
        }
        guard let upserts = (object["upserts"] ?? []) as? [[String: Any]],
            let tombstones = (object["tombstones"] ?? []) as? [String]
        else { throw .malformed(catalog: catalog, url: url, "upserts must be objects and tombstones ids") }
        guard let version = (object["version"] as? NSNumber)?.int64Value else {
            throw .malformed(catalog: catalog, url: url, "the page has no numeric version")
        }
        let next = object["nextCursor"] as? String
        return Page(raw: raw, upserts: upserts, tombstones: tombstones, nextCursor: next, version: version)
    }

    /// The page as fetched, before any of it is applied.
    private func writeJournal(_ page: Page) throws(CatalogError) {
        do { try spool.writeControlFile(journalName.description, page.raw) } catch { throw .spool(error) }
    }

    /// A page fetched but perhaps not wholly applied when a sync died:
    /// apply it again (idempotently) and advance as the sync would have.
    private func replayJournal(into directory: DirectoryHandle, state: inout CatalogState) throws(CatalogError) {
        let journal: [UInt8]?
        do { journal = try spool.controlFile(journalName.description) } catch { throw .spool(error) }
        guard let raw = journal else { return }
        var ignored = CatalogSyncReport(session: RoundID(value: "replay"))
        // A journal is written whole (tmp/, fsync, rename), so one that does
        // not parse was changed by hand: it is dropped, and the sync goes on
        // from the saved cursor, which is still before that page.
        if let page = try? Self.parse(raw, catalog: catalog.name.value, url: "journal") {
            try applyAndAdvance(page, into: directory, state: &state, report: &ignored)
        } else {
            try removeJournal()
        }
    }

    /// Applies a journalled page, then moves the saved position past it, then
    /// drops the journal: in that order, so a crash anywhere is repaired by
    /// replaying the journal.
    private func applyAndAdvance(
        _ page: Page, into directory: DirectoryHandle, state: inout CatalogState, report: inout CatalogSyncReport
    ) throws(CatalogError) {
        try apply(page, into: directory, report: &report)
        if state.fullStartedAt != nil { try remember(page) }
        state.cursor = page.nextCursor
        state.version = page.version
        state.complete = page.nextCursor == nil
        try save(state)
        try removeJournal()
    }

    private func removeJournal() throws(CatalogError) {
        do { try spool.control.remove(journalName) } catch {
            throw .spool(SpoolError(error))
        }
    }

    private func apply(_ page: Page, into directory: DirectoryHandle, report: inout CatalogSyncReport)
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
            for tombstone in page.tombstones {
                guard let id = RecordID(tombstone) else { continue }
                do { try directory.remove(FileName("\(id).json")) } catch { throw SpoolError(error) }
                report.tombstones += 1
            }
            do { try directory.sync() } catch { throw SpoolError(error) }
        } catch {
            throw .spool(error)
        }
    }

    /// A full sync notes every id the server sent, durably, page by page.
    private func remember(_ page: Page) throws(CatalogError) {
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
    private func removeUnseen(in directory: DirectoryHandle) throws(CatalogError) -> Int {
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

    private func acknowledge(_ fetch: HTTPFetch, version: Int64) throws(CatalogError) {
        guard let url = catalog.ackURL else { return }
        let body =
            #"{"device_id":"# + String(decoding: JSONValidator.encodeString(configuration.deviceID), as: UTF8.self)
            + #","catalog":"# + String(decoding: JSONValidator.encodeString(catalog.name.value), as: UTF8.self)
            + #","version":\#(version)}"#
        let answer: HTTPFetch.Answer
        do { answer = try fetch.post(url, json: Array(body.utf8)) } catch {
            throw .transport(catalog: catalog.name.value, url: url, error)
        }
        guard (200...299).contains(answer.status) else {
            throw .http(
                catalog: catalog.name.value, url: url, status: answer.status,
                answer: configuration.redactor.excerpt(answer.body, limit: LedgerLine.detailLimit))
        }
    }

    /// `catalogs/NAME/`, created when missing; named in messages relative
    /// to the spool, like its folders.
    private func catalogDirectory() throws(CatalogError) -> DirectoryHandle {
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
