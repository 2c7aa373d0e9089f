import CourierConfig
import CourierSpool
import CourierSupport
import CourierTransport

/// What one `courier catalog sync` did.
package struct CatalogSyncReport: Sendable {
    package var session: RoundID
    package var cursor = CatalogCursor.version
    package var full = false
    package var resumed = false
    package var pages = 0
    package var upserts = 0
    package var tombstones = 0
    package var removedByFullSync = 0
    /// Upserts without a usable id: not written, and not counted as seen.
    package var skipped = 0
    /// The server's version and time at the end, each when it gave one.
    package var version: Int64?
    package var serverTime: String?
    package var durationMilliseconds: Int64 = 0

    /// What the sync's cursor reached: `version 15`, or with time cursors
    /// `server time 2025-10-22T10:00:00Z (version 15)`.
    package var position: String {
        switch (cursor, serverTime) {
        case (.serverTime, let time?): return "server time \(time)" + (version.map { " (version \($0))" } ?? "")
        default: return version.map { "version \($0)" } ?? "no version"
        }
    }
}

package enum CatalogError: Error, Sendable, CustomStringConvertible {
    case http(catalog: String, url: String, status: Int, answer: String)
    case transport(catalog: String, url: String, FetchError)
    case malformed(catalog: String, url: String, String)
    /// The server's cursors went round in a circle, or past `max-pages`:
    /// the sync stopped and its state went back to what it was before.
    case endless(catalog: String, url: String, String)
    case spool(SpoolError)

    package var description: String {
        switch self {
        case .http(let catalog, let url, let status, let answer):
            return "catalog \(catalog): \(Redactor.displayURL(url)) answered HTTP \(status): \(answer)"
        case .transport(let catalog, let url, let error):
            return "catalog \(catalog): \(Redactor.displayURL(url)): \(error)"
        case .malformed(let catalog, let url, let reason):
            return "catalog \(catalog): \(Redactor.displayURL(url)): \(reason)"
        case .endless(let catalog, let url, let reason):
            return
                "catalog \(catalog): \(Redactor.displayURL(url)): \(reason); the catalog's state is as before the sync"
        case .spool(let error): return error.description
        }
    }
}
