import CourierSpool
import Foundation

/// A catalog's sync state, kept in `.courier/catalog-NAME.json` and
/// replaced atomically after every page, so a sync killed at any point
/// resumes from the last applied page.
public struct CatalogState: Codable, Sendable, Equatable {
    /// The server version the local copy is complete up to; nil: never synced.
    public var since: Int64?
    /// The `since` of the sync in progress; nil when none is.
    public var syncing: Int64?
    /// Where the sync in progress goes on from.
    public var cursor: String?
    /// The sync in progress has applied its last page; only finishing is left.
    public var complete = false
    /// The server's version at the last page seen.
    public var version: Int64?
    /// When the full sync in progress started (nil: the sync in progress,
    /// if any, is a delta sync).
    public var fullStartedAt: String?
    /// Failed syncs in a row; at three, the next sync is a full one.
    public var failures = 0
    public var lastSuccess: String?
    public var lastDurationMilliseconds: Int64?
    public var lastError: String?

    public init() {}

    static func fileName(_ catalog: SubscriberName) -> String { "catalog-\(catalog).json" }

    /// The saved state; a new one when there is none yet. A file that
    /// cannot be read is an error (it must not pass for a catalog never
    /// synced); one that does not decode was edited by hand, and a fresh
    /// state means a full sync, which rebuilds the catalog from the server.
    public static func load(_ catalog: SubscriberName, in spool: Spool) throws(SpoolError) -> CatalogState {
        guard let bytes = try spool.controlFile(fileName(catalog)),
            let state = try? JSONDecoder().decode(CatalogState.self, from: Data(bytes))
        else { return CatalogState() }
        return state
    }

    func save(_ catalog: SubscriberName, in spool: Spool) throws(SpoolError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain strings and numbers cannot fail.
        guard let data = try? encoder.encode(self) else { return }
        try spool.writeControlFile(Self.fileName(catalog), Array(data) + [0x0A])
    }
}
