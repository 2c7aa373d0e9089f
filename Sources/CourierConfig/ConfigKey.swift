/// Every key `etc/courier.conf` accepts, one enum per section. The loader
/// switches over these exhaustively, so a key it accepts is a case here;
/// the round's stages list the cases they read (`…Settings.keys`), and
/// `StageSettingsTests` holds those lists, docs/architecture.md's table and
/// these enums together.
package enum CourierKey: String, CaseIterable, Sendable {
    case spool
    case deviceID = "device-id"
    case shared
    case workerID = "worker-id"
    case notify
    case notifyCommand = "notify-command"
    case notifyTimeout = "notify-timeout"
    case metricsFile = "metrics-file"
    case retention
    case failedRetention = "failed-retention"
    case routeWait = "route-wait"
    case settle
    case backgroundTimeout = "background-timeout"
    case foregroundTimeout = "foreground-timeout"
    case backoff
    case breaker
    case retrySchedule = "retry-schedule"
    case maxRecordSize = "max-record-size"
}

/// The keys of a `[subscriber NAME]` section.
package enum SubscriberKey: String, CaseIterable, Sendable {
    case url
    case kinds
    case tokenFile = "token-file"
    case header
    case concurrency
    case caFile = "ca-file"
    case signingSecretFile = "signing-secret-file"
    case mode
    case batchSize = "batch-size"
    case atomic
    case maxBatchBytes = "max-batch-bytes"
    case gzip
    case retrySchedule = "retry-schedule"
    case breaker
    case oauthTokenURL = "oauth-token-url"
    case oauthClientID = "oauth-client-id"
    case oauthClientSecretFile = "oauth-client-secret-file"
    case oauthScope = "oauth-scope"
}

/// The keys of a `[catalog NAME]` section.
package enum CatalogKey: String, CaseIterable, Sendable {
    case url
    case ackURL = "ack-url"
    case pageSize = "page-size"
    case since
    case maxPages = "max-pages"
    case tokenFile = "token-file"
    case caFile = "ca-file"
    case oauthTokenURL = "oauth-token-url"
    case oauthClientID = "oauth-client-id"
    case oauthClientSecretFile = "oauth-client-secret-file"
    case oauthScope = "oauth-scope"
}

/// One key of one kind of section, as docs/architecture.md writes it:
/// `[courier] settle`, `[subscriber NAME] url`, `[catalog NAME] url`.
package enum ConfigKey: Hashable, Sendable, CustomStringConvertible {
    case courier(CourierKey)
    case subscriber(SubscriberKey)
    case catalog(CatalogKey)

    /// Every key the loader accepts.
    package static var all: [ConfigKey] {
        CourierKey.allCases.map(ConfigKey.courier) + SubscriberKey.allCases.map(ConfigKey.subscriber)
            + CatalogKey.allCases.map(ConfigKey.catalog)
    }

    /// The section it is given in, as its header is written.
    package var section: String {
        switch self {
        case .courier: return "[courier]"
        case .subscriber: return "[subscriber NAME]"
        case .catalog: return "[catalog NAME]"
        }
    }

    package var name: String {
        switch self {
        case .courier(let key): return key.rawValue
        case .subscriber(let key): return key.rawValue
        case .catalog(let key): return key.rawValue
        }
    }

    package var description: String { "\(section) \(name)" }
}
