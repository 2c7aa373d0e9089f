import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool
import CourierSupport
import Foundation

/// Where a delta sync starts: the server's `version`, or its `server_time`
/// (RFC 3339, kept exactly as the server wrote it). Saved as a JSON number
/// or string, so a state file from before time cursors still reads.
package enum CatalogSince: Codable, Sendable, Equatable, CustomStringConvertible {
    case version(Int64)
    case serverTime(String)

    /// What a full sync asks for: everything since the beginning.
    static func beginning(_ cursor: CatalogCursor) -> CatalogSince {
        switch cursor {
        case .version: return .version(0)
        case .serverTime: return .serverTime("1970-01-01T00:00:00Z")
        }
    }

    /// False for a time no server gave (the parser takes only RFC 3339 of
    /// at most 64 bytes): sent back, every delta would fail until the third
    /// failure made the sync full.
    var isPlausible: Bool {
        guard case .serverTime(let time) = self else { return true }
        return time.utf8.count <= CatalogPage.serverTimeLimit && Timestamp(rfc3339: time) != nil
    }

    package var cursor: CatalogCursor {
        switch self {
        case .version: return .version
        case .serverTime: return .serverTime
        }
    }

    /// The `since=` value, before percent-encoding.
    package var description: String {
        switch self {
        case .version(let version): return String(version)
        case .serverTime(let time): return time
        }
    }

    package init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let version = try? container.decode(Int64.self) {
            self = .version(version)
        } else {
            self = .serverTime(try container.decode(String.self))
        }
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .version(let version): try container.encode(version)
        case .serverTime(let time): try container.encode(time)
        }
    }
}

/// A catalog's sync state, kept in `.courier/catalog-NAME.json` and
/// replaced atomically after every page, so a sync killed at any point
/// resumes from the last applied page.
package struct CatalogState: Codable, Sendable, Equatable {
    /// Where the local copy is complete up to; nil: never synced.
    package var since: CatalogSince?
    /// The `since` of the sync in progress; nil when none is.
    package var syncing: CatalogSince?
    /// Where the sync in progress goes on from.
    package var cursor: String?
    /// The sync in progress has applied its last page; only finishing is left.
    package var complete = false
    /// The server's version at the last page seen, when it gives one.
    package var version: Int64?
    /// The server's `server_time` at the last page seen, when it gives one.
    package var serverTime: String?
    /// When the full sync in progress started (nil: the sync in progress,
    /// if any, is a delta sync).
    package var fullStartedAt: String?
    /// Failed syncs in a row; at three, the next sync is a full one.
    package var failures = 0
    package var lastSuccess: String?
    package var lastDurationMilliseconds: Int64?
    package var lastError: String?

    package init() {}

    /// The version the local copy is complete up to, when the server gives
    /// versions: the cursor itself, or with time cursors the version the
    /// last whole sync reached.
    package var completeVersion: Int64? {
        switch since {
        case .version(let version)?: return version
        case .serverTime?: return syncing == nil ? version : nil
        case nil: return nil
        }
    }

    static func fileName(_ catalog: SubscriberName) -> String { "catalog-\(catalog).json" }

    /// The saved state; a new one when there is none yet. A file that
    /// cannot be read is an error (it must not pass for a catalog never
    /// synced); one that does not decode, or holds a time that is no time,
    /// was edited by hand, and a fresh state means a full sync, which
    /// rebuilds the catalog from the server.
    package static func load(_ catalog: SubscriberName, in spool: Spool) throws(SpoolError) -> CatalogState {
        guard let bytes = try spool.controlFile(fileName(catalog)),
            let state = try? JSONDecoder().decode(CatalogState.self, from: Data(bytes)),
            state.since?.isPlausible ?? true, state.syncing?.isPlausible ?? true
        else { return CatalogState() }
        return state
    }

    func save(_ catalog: SubscriberName, in session: SpoolSession) throws(SpoolError) {
        try session.commit(Transition(newFiles: [file(catalog)]))
    }

    /// The state as the file that keeps it, for a commit.
    func file(_ catalog: SubscriberName) -> Transition.NewFile {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings and numbers cannot fail.
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return Transition.NewFile(
            Array(data) + [0x0A], as: FileName(Self.fileName(catalog)), in: .control, replacing: true)
    }
}
