import CourierOperations
import CourierSpool

/// `etag --json`: one line per subscriber; `server_id` only when the
/// server gave one.
struct EntityTagJSON: Encodable, Sendable {
    let subscriber: String
    let entity: String
    let etag: String
    let key: String
    let time: String
    var serverID: String?

    enum CodingKeys: String, CodingKey {
        case subscriber, entity, etag, key, time
        case serverID = "server_id"
    }
}

/// `check --json`.
struct CheckJSON: Encodable, Sendable {
    struct Finding: Encodable, Sendable {
        let severity: String
        let message: String
    }

    /// The file read, or null for none.
    @OrNull var config: String?
    let spool: String
    let ok: Bool
    let subscribers: [String]
    let catalogs: [String]
    let findings: [Finding]
}

/// `hold --json`, `release --json` (which adds `queued`); `status
/// --json`'s `held[]` has the first three fields.
struct HoldJSON: Encodable, Sendable {
    let subscriber: String
    let held: Bool
    /// Null when `release` found no hold.
    @OrNull var since: String?
    @OrNull var reason: String?
    /// `release`: the queued entries the next round sends.
    var queued: Int?
}

extension HoldJSON {
    init(_ hold: Hold, held: Bool, queued: Int? = nil) {
        self.init(
            subscriber: hold.subscriber.value, held: held, since: hold.since.rfc3339, reason: hold.reason,
            queued: queued)
    }

    /// `release` of a subscriber that was not held.
    init(notHeld subscriber: String) {
        self.init(subscriber: subscriber, held: false, since: nil, reason: nil, queued: nil)
    }
}

/// `ack`, `resend`, `delete --json`: what moved and what did not.
struct MovesJSON: Encodable, Sendable {
    struct Moved: Encodable, Sendable {
        let entry: String
        let from: String
        /// Null for a deletion.
        @OrNull var to: String?
    }

    struct NotMoved: Encodable, Sendable {
        let entry: String
        let reason: String
    }

    struct Skipped: Encodable, Sendable {
        let entry: String
        let state: String
    }

    let action: String
    let moved: [Moved]
    let notMoved: [NotMoved]
    let skipped: [Skipped]
}
