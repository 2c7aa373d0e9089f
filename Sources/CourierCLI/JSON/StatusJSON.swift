import CourierCatalog
import CourierConfig
import CourierOperations
import CourierRound
import CourierSpool

/// One catalog's state, the same in `catalog status --json` (`catalogs[]`)
/// and `status --json` (`catalogs{NAME: …}`).
struct CatalogJSON: Encodable, Sendable {
    /// A version number or a server time, as the server gave it.
    enum Since: Encodable, Sendable {
        case version(Int64)
        case serverTime(String)

        init(_ since: CatalogSince) {
            switch since {
            case .version(let version): self = .version(version)
            case .serverTime(let time): self = .serverTime(time)
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .version(let version): try container.encode(version)
            case .serverTime(let time): try container.encode(time)
            }
        }
    }

    let catalog: String
    @OrNull var since: Since?
    @OrNull var version: Int64?
    @OrNull var lastSuccess: String?
    let failures: Int
    @OrNull var lastDurationMs: Int64?
    /// `full` or `delta`.
    let nextSync: String
    let interrupted: Bool
    @OrNull var lastError: String?
}

extension CatalogJSON {
    init(_ catalog: Catalog, _ state: CatalogState) {
        self.init(
            catalog: catalog.name.value, since: state.since.map(Since.init), version: state.completeVersion,
            lastSuccess: state.lastSuccess, failures: state.failures, lastDurationMs: state.lastDurationMilliseconds,
            nextSync: CatalogSync.nextIsFull(state, cursor: catalog.cursor(resuming: state)) ? "full" : "delta",
            interrupted: state.syncing != nil, lastError: state.lastError)
    }
}

/// `catalog status --json`.
struct CatalogsJSON: Encodable, Sendable {
    let catalogs: [CatalogJSON]
}

/// `status --json`: one object.
struct StatusJSON: Encodable, Sendable {
    struct Held: Encodable, Sendable {
        let subscriber: String
        let since: String
        let reason: String
    }

    struct Worker: Encodable, Sendable {
        let worker: String
        let alive: Bool
        let claims: Int
    }

    struct Deferred: Encodable, Sendable {
        let count: Int
        let due: Int
        @OrNull var nextAttempt: String?
    }

    /// The last round's batches to one subscriber.
    struct Batches: Encodable, Sendable {
        let batchSize: Int
        let batches: Int
        let items: Int
        let conflicts: Int
        let conflictRate: Double
    }

    /// A round's `.courier/round-running.json` as it is, and whether its
    /// process still runs.
    struct Running: Encodable, Sendable {
        let progress: RoundProgress
        let alive: Bool

        enum CodingKeys: String, CodingKey { case alive }

        func encode(to encoder: any Encoder) throws {
            try progress.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(alive, forKey: .alive)
        }
    }

    /// `{"total": 3, "under5m": 1, …}` for one subscriber and state.
    typealias Ages = [String: [String: [String: Int]]]

    let spool: String
    /// Every state, by folder name.
    let counts: [String: Int]
    let needsAttention: [String]
    @OrNull var nextRound: String?
    let notifications: String
    @OrNull var notificationsWorking: Bool?
    @OrNull var configurationProblem: String?
    let tokenWarnings: [String]
    let held: [Held]
    let workers: [Worker]
    let deferred: Deferred
    let batches: [String: Batches]
    let catalogs: [String: CatalogJSON]
    /// `--ages` only.
    var ages: Ages?
    let running: [Running]
    /// The last round's summary, as the round wrote it.
    @OrNull var lastRound: RoundSummary?
}
