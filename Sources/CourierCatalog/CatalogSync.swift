import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool
import CourierSupport
import CourierTransport
import Foundation
import Glibc

/// Pulls a catalog's deltas page by page into `spool/catalogs/NAME/ID.json`
/// (docs/design.md §8). The server wins: its upserts replace local files, its
/// tombstones delete them. Each page is first written to a journal in
/// `.courier/`, then applied, then the state advances; a crash anywhere
/// resumes by replaying the journal (upserts and deletes are idempotent)
/// and going on from the saved cursor: nothing lost, nothing applied twice
/// to any effect.
package struct CatalogSync {
    let session: SpoolSession
    let configuration: Configuration
    let catalog: Catalog
    let log: EventLog

    /// After this many failed syncs in a row the next one is full.
    package static let failuresBeforeFullSync = 3
    static let timeout: Duration = .seconds(60)

    package init(session: SpoolSession, configuration: Configuration, catalog: Catalog, log: EventLog = .silent) {
        self.session = session
        self.configuration = configuration
        self.catalog = catalog
        self.log = log
    }

    package func run(full requested: Bool) throws(CatalogError) -> CatalogSyncReport {
        let lockFile: FileDescriptor
        do {
            lockFile = try session.spool.control.openFile(
                FileName("catalog-\(catalog.name).lock"), flags: O_RDWR | O_CREAT, mode: 0o640)
            // Asked for again, not waited for: on a shared spool another
            // host may sync the same catalog (`lockExclusivelyAskingAgain`).
            try lockFile.lockExclusivelyAskingAgain()
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
        session.addSecrets(of: configuration.redactor)
        var state: CatalogState
        do { state = try CatalogState.load(catalog.name, in: session.spool) } catch { throw .spool(error) }
        let cursor = catalog.cursor(resuming: state)
        report.cursor = cursor
        let store = try CatalogStore(session: session, catalog: catalog, cursor: cursor, log: log)
        var before = state
        do throws(CatalogError) {
            try store.replayJournal(state: &state)
            before = state
            try begin(full: requested, cursor: cursor, state: &state, report: &report, store: store)
            let fetch = try fetcher(session: report.session)
            var trail = PageTrail(maxPages: catalog.maxPages, start: state.cursor)
            while !state.complete {
                let url = pageURL(since: state.syncing ?? .beginning(cursor), cursor: state.cursor)
                let page = try fetchPage(fetch, url: url, cursor: cursor, number: report.pages + 1)
                if let problem = trail.problem(after: page.nextCursor) {
                    throw .endless(catalog: catalog.name.value, url: catalog.url, problem)
                }
                try store.writeJournal(page)
                try store.applyAndAdvance(page, state: &state, report: &report)
                report.pages += 1
            }
            if state.fullStartedAt != nil { report.removedByFullSync = try store.removeUnseen() }
            report.version = state.version
            report.serverTime = state.serverTime
            Self.arrive(&state, cursor: cursor)
            try acknowledge(fetch, report: report)
            report.durationMilliseconds = (MonotonicInstant.now() - started).milliseconds
            try succeed(&state, report: report, store: store)
            // The sync is applied and saved; a ledger line that cannot be
            // written must not turn it into a failure (and a full-sync retry).
            _ = try? session.commit(
                Transition(lines: [line(.catalogSynced, report, status: 200, detail: Self.summary(report))]))
            return report
        } catch {
            // A server that goes round in circles has said nothing this
            // sync can finish from: the next one starts where this one did.
            if case .endless = error {
                // A sync begin() set aside for a new one is not restored:
                // its seen ids are gone.
                state = report.resumed ? before : before.settingAsideSyncInProgress()
            }
            state.failures += 1
            state.lastError = error.description
            // The sync's own error is the one to report; a spool that cannot
            // take the failure count or the line fails the same way again.
            try? state.save(catalog.name, in: session)
            var status = 0
            if case .http(_, _, let code, _) = error { status = code }
            report.durationMilliseconds = (MonotonicInstant.now() - started).milliseconds
            let failed = line(
                .catalogFailed, report, status: status, detail: "failure \(state.failures) in a row: \(error)")
            _ = try? session.commit(Transition(lines: [failed]))
            throw error
        }
    }

    /// Starts a new delta or full sync, or resumes the one a crash left.
    private func begin(
        full requested: Bool, cursor: CatalogCursor, state: inout CatalogState, report: inout CatalogSyncReport,
        store: CatalogStore
    ) throws(CatalogError) {
        // A cursor of the other kind (the configuration's `since` changed)
        // says nothing the server would understand: start over, in full.
        let wantsFull = requested || Self.nextIsFull(state, cursor: cursor)
        // A full sync an older courier began noted ids it may have split
        // (one with a newline read as two): only starting over is safe.
        var seenUnreadable = false
        if state.fullStartedAt != nil { seenUnreadable = try !store.seenIsCurrent() }
        if state.syncing?.cursor != cursor || (wantsFull && state.fullStartedAt == nil) || seenUnreadable {
            state.syncing = wantsFull || seenUnreadable ? .beginning(cursor) : state.since
            state.cursor = nil
            state.complete = false
            // What the server says this time, not what it said last time.
            state.version = nil
            state.serverTime = nil
            try store.forgetSeen()
            state.fullStartedAt = wantsFull || seenUnreadable ? Timestamp.now().rfc3339 : nil
            do { try state.save(catalog.name, in: session) } catch { throw .spool(error) }
        } else {
            report.resumed = true
        }
        report.full = state.fullStartedAt != nil
    }

    /// Whether the next sync is full without `--full`: never synced, three
    /// failures in a row, or a saved cursor of the other kind (the
    /// configuration's `since` changed), which the server would not
    /// understand. `catalog status` and `status` say the same.
    package static func nextIsFull(_ state: CatalogState, cursor: CatalogCursor) -> Bool {
        state.failures >= failuresBeforeFullSync || state.since?.cursor != cursor
    }

    /// The position after a whole sync: the version or server time reached,
    /// nothing pending.
    private static func arrive(_ state: inout CatalogState, cursor: CatalogCursor) {
        switch cursor {
        case .version:
            // Pages without changes still carry a version (the parser insists).
            state.since = state.version.map { .version($0) } ?? state.syncing
        case .serverTime:
            state.since = state.serverTime.map { .serverTime($0) } ?? state.syncing
        }
        state.syncing = nil
        state.cursor = nil
        state.complete = false
        state.fullStartedAt = nil
    }

    private func succeed(_ state: inout CatalogState, report: CatalogSyncReport, store: CatalogStore)
        throws(CatalogError)
    {
        state.failures = 0
        state.lastError = nil
        state.lastSuccess = Timestamp.now().rfc3339
        state.lastDurationMilliseconds = report.durationMilliseconds
        try store.saveEnding(state, full: report.full)
    }

    private func fetcher(session: RoundID) throws(CatalogError) -> HTTPFetch {
        let fields: [HTTPHeaderField]
        do { fields = try headers(session: session) } catch {
            throw .malformed(catalog: catalog.name.value, url: catalog.url, error.description)
        }
        let options = CurlOptions(timeout: Self.timeout, caFile: catalog.caFile)
        return HTTPFetch(options: options, headers: fields, bearer: bearer(options: options))
    }

    private func line(_ event: LedgerEvent, _ report: CatalogSyncReport, status: Int, detail: String) -> LedgerLine {
        LedgerLine(
            time: .now(), actor: .round(report.session), subscriber: catalog.name, key: "catalog", event: event,
            answer: LedgerAnswer(column: status), attempt: report.pages,
            durationMilliseconds: report.durationMilliseconds,
            detail: detail)
    }

    static func summary(_ report: CatalogSyncReport) -> String {
        "\(report.full ? "full" : "delta") sync to \(report.position): \(report.upserts) upserts, "
            + "\(report.tombstones) tombstones in \(report.pages) pages"
            + (report.removedByFullSync > 0 ? ", \(report.removedByFullSync) removed" : "")
            + (report.skipped > 0 ? ", \(report.skipped) upserts without a usable id skipped" : "")
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

    /// `GET {url}/delta?since=V&pageSize=N[&cursor=C]`: the sync
    /// architecture's three query parameters. A query of the catalog URL's
    /// own (`?key=…`) goes first; its `#fragment`, never sent, is left off.
    private func pageURL(since: CatalogSince, cursor: String?) -> String {
        let parts = URLText(catalog.url)
        var url = String(parts.beforeQuery)
        if url.hasSuffix("/") { url.removeLast() }
        url += "/delta?"
        if let own = parts.query, !own.isEmpty { url += own + "&" }
        url += "since=\(Self.queryValue(since.description))&pageSize=\(catalog.pageSize)"
        if let cursor { url += "&cursor=" + Self.queryValue(cursor) }
        return url
    }

    private func fetchPage(_ fetch: HTTPFetch, url: String, cursor: CatalogCursor, number: Int)
        throws(CatalogError) -> CatalogPage
    {
        let answer: HTTPFetch.Answer
        do { answer = try fetch.get(url) } catch { throw .transport(catalog: catalog.name.value, url: url, error) }
        guard (200...299).contains(answer.status) else {
            throw .http(
                catalog: catalog.name.value, url: url, status: answer.status,
                answer: configuration.redactor.excerpt(answer.body, limit: LedgerLine.detailLimit))
        }
        return try CatalogPage.parse(answer.body, catalog: catalog, cursor: cursor, url: url, page: number)
    }

    /// A query value as sent: `+` (a time zone offset), `&` and `=` encoded.
    private static func queryValue(_ value: String) -> String {
        value.addingPercentEncoding(
            withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+"))) ?? value
    }

    /// Tells the server what this device now holds: the version and the
    /// server time it reached, each when the server gave one.
    private func acknowledge(_ fetch: HTTPFetch, report: CatalogSyncReport) throws(CatalogError) {
        guard let url = catalog.ackURL else { return }
        func string(_ text: String) -> String { String(decoding: JSONValidator.encodeString(text), as: UTF8.self) }
        var body = #"{"device_id":"# + string(configuration.deviceID) + #","catalog":"# + string(catalog.name.value)
        if let version = report.version { body += #","version":\#(version)"# }
        if let serverTime = report.serverTime { body += #","server_time":"# + string(serverTime) }
        body += "}"
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
}
