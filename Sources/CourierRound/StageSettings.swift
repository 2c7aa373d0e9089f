import CourierConfig
import CourierIdentifiers
import CourierSupport
import CourierTransport

// What each stage of a round reads from the configuration, as its own
// small value (Postfix's programs each name the parameters they read):
// one initialiser maps the configuration to it, and `keys`, beside the
// mapping, says which ini keys that is. The round builds them once
// (`RoundSettings`); no stage sees the whole `Configuration`.
// docs/architecture.md's table "What each stage reads" says the same, and
// `StageSettingsTests` holds the two together.

/// Intake: where a dropped record goes, how large it may be, and how long
/// a file that does not parse is left to settle.
struct IntakeSettings: Sendable {
    static let keys: [ConfigKey] = [
        .courier(.maxRecordSize), .courier(.settle), .subscriber(.kinds), .subscriber(.concurrency),
    ]
    let maxRecordSize: Int
    let settle: Duration
    /// The configured subscribers, whose names and `kinds` route a record
    /// (`SubscriberChoice`, which `enqueue` asks too, takes whole sections).
    let subscribers: [Subscriber]

    init(_ configuration: Configuration) {
        maxRecordSize = configuration.maxRecordSize
        settle = configuration.settle
        subscribers = configuration.subscribers
    }

    /// Connections the round may have open at once: what a group behind
    /// a commit leaves room for (`Intake.groupSizeBehindCommit`).
    var connections: Int { subscribers.reduce(0) { $0 + $1.concurrency } }

    /// What routes a record that finds its workout already taken in.
    var routes: RouteSettings.Lookup {
        RouteSettings.Lookup(subscribers: subscribers.map(\.name), maxRecordSize: maxRecordSize)
    }
}

/// Claiming reads an entry with the checks of intake.
struct ClaimSettings: Sendable {
    static let keys: [ConfigKey] = [.courier(.maxRecordSize)]
    let maxRecordSize: Int

    init(_ configuration: Configuration) { maxRecordSize = configuration.maxRecordSize }
}

/// The routes step: how long a workout waits for its route.
struct RouteSettings: Sendable {
    static let keys: [ConfigKey] = [.courier(.routeWait), .courier(.maxRecordSize)]
    let routeWait: Duration
    let lookup: Lookup

    /// Where a workout's entries may be: one per configured subscriber,
    /// each read within `max-record-size`.
    struct Lookup: Sendable {
        let subscribers: [SubscriberName]
        let maxRecordSize: Int
    }

    init(_ configuration: Configuration) {
        routeWait = configuration.routeWait
        lookup = Lookup(subscribers: configuration.subscribers.map(\.name), maxRecordSize: configuration.maxRecordSize)
    }
}

/// Request building. The subscriber a request is built for carries the
/// rest of what goes on the wire to the transport: its URL, headers,
/// token, CA file, signing secret and `gzip`.
struct RequestSettings: Sendable {
    static let keys: [ConfigKey] =
        [
            .courier(.deviceID), .subscriber(.url), .subscriber(.atomic), .subscriber(.header),
            .subscriber(.tokenFile), .subscriber(.caFile), .subscriber(.signingSecretFile), .subscriber(.gzip),
        ] + Configuration.redactorKeys
    let deviceID: String
    /// Each subscriber's header lines are made once per round from its
    /// `header` and `token-file` keys (`DeliveryHeaders`).
    let subscribers: [Subscriber]
    /// The longest secret an answer may echo: the configuration's, or the
    /// longest OAuth token courier accepts when a subscriber fetches them
    /// (they arrive during the round, so their length is not known yet).
    let longestSecret: Int

    init(_ configuration: Configuration) {
        deviceID = configuration.deviceID
        subscribers = configuration.subscribers
        let longestToken = configuration.subscribers.contains { $0.oauth != nil } ? OAuthToken.longest : 0
        longestSecret = max(configuration.redactor.longest, longestToken)
    }
}

/// OAuth in delivery: the subscribers' clients (on each `Subscriber`),
/// the secrets every token joins, and the time a token request may take.
struct AuthorizationSettings: Sendable {
    static let keys: [ConfigKey] =
        [
            .courier(.foregroundTimeout), .courier(.backgroundTimeout), .subscriber(.oauthScope),
        ] + Configuration.redactorKeys
    let redactor: Redactor
    let timeouts: RoundTimeouts

    init(_ configuration: Configuration) {
        redactor = configuration.redactor
        timeouts = RoundTimeouts(configuration)
    }

    func timeout(in mode: RoundMode) -> Duration { timeouts.timeout(in: mode) }
}

/// `foreground-timeout` and `background-timeout`: how long a request (or a
/// token request) of a round of each mode may take.
struct RoundTimeouts: Sendable {
    let foreground: Duration
    let background: Duration

    init(_ configuration: Configuration) {
        foreground = configuration.foregroundTimeout
        background = configuration.backgroundTimeout
    }

    func timeout(in mode: RoundMode) -> Duration { mode == .foreground ? foreground : background }
}

/// Admission counts holds of configured subscribers only.
struct AdmissionSettings: Sendable {
    /// Only the section names: which subscribers are configured.
    static let keys: [ConfigKey] = []
    let subscribers: Set<SubscriberName>

    init(_ configuration: Configuration) { subscribers = Set(configuration.subscribers.map(\.name)) }
}

/// `send-now --attention` leaves what an unconfigured subscriber would
/// only leave waiting.
struct AttentionRequeueSettings: Sendable {
    /// Only the section names: which subscribers are configured.
    static let keys: [ConfigKey] = []
    let subscribers: Set<SubscriberName>

    init(_ configuration: Configuration) { subscribers = Set(configuration.subscribers.map(\.name)) }
}

/// The breaker's limit per subscriber: its own `breaker`, else the
/// `[courier]` one; none for `off`.
struct BreakerSettings: Sendable {
    static let keys: [ConfigKey] = [.courier(.breaker), .subscriber(.breaker)]
    let limits: SubscriberTable<Int>

    init(_ configuration: Configuration) {
        var limits = SubscriberTable<Int>()
        for subscriber in configuration.subscribers {
            limits[subscriber.name] = configuration.breakerLimit(for: subscriber)
        }
        self.limits = limits
    }
}

/// The configured `batch-size` of each batch subscriber.
struct BatchSizeSettings: Sendable {
    static let keys: [ConfigKey] = [.subscriber(.mode), .subscriber(.batchSize)]
    let configured: [SubscriberName: Int]

    init(_ configuration: Configuration) {
        var configured: [SubscriberName: Int] = [:]
        for subscriber in configuration.subscribers where subscriber.mode == .batch {
            configured[subscriber.name] = subscriber.batch.size
        }
        self.configured = configured
    }
}

/// Settling: a foreground round's retry waits, and the secrets batch
/// results are redacted with.
struct SettleSettings: Sendable {
    static let keys: [ConfigKey] = [.courier(.backoff)] + Configuration.redactorKeys
    let backoff: [Duration]
    let redactor: Redactor

    init(_ configuration: Configuration) {
        backoff = configuration.backoff
        redactor = configuration.redactor
    }
}

/// `notify-command` after a background round.
package struct NotifierSettings: Sendable {
    static let keys: [ConfigKey] = [.courier(.notify), .courier(.notifyCommand), .courier(.notifyTimeout)]
    let notify: NotifyMode
    let command: String?
    let timeout: Duration

    package init(_ configuration: Configuration) {
        notify = configuration.notify
        command = configuration.notifyCommand
        timeout = configuration.notifyTimeout
    }
}

/// The delivery pass itself: the subscribers it starts requests to, at
/// most `concurrency` each, their batches cut at `max-batch-bytes`, on a
/// transport whose timeout the round's mode picks.
struct DeliveryPassSettings: Sendable {
    static let keys: [ConfigKey] = [
        .courier(.deviceID), .courier(.foregroundTimeout), .courier(.backgroundTimeout), .subscriber(.concurrency),
        .subscriber(.mode), .subscriber(.maxBatchBytes),
    ]
    let subscribers: [Subscriber]
    let deviceID: String
    let timeouts: RoundTimeouts

    init(_ configuration: Configuration) {
        subscribers = configuration.subscribers
        deviceID = configuration.deviceID
        timeouts = RoundTimeouts(configuration)
    }

    func subscriber(named name: SubscriberName) -> Subscriber? { subscribers.first { $0.name == name } }

    func timeout(in mode: RoundMode) -> Duration { timeouts.timeout(in: mode) }
}

/// Every stage's settings, built once when a round is made.
package struct RoundSettings: Sendable {
    /// The round's own: the secrets it adds to the session's ledger.
    static let keys: [ConfigKey] = Configuration.redactorKeys
    let redactor: Redactor
    let intake: IntakeSettings
    let claim: ClaimSettings
    let routes: RouteSettings
    let requests: RequestSettings
    let authorization: AuthorizationSettings
    let admission: AdmissionSettings
    let attention: AttentionRequeueSettings
    let breaker: BreakerSettings
    let batchSizes: BatchSizeSettings
    let settle: SettleSettings
    let notifier: NotifierSettings
    let delivery: DeliveryPassSettings
    /// As configured; the round keeps them only where the spool can count
    /// retries (`RetrySchedules.kept(on:log:)`).
    let schedules: RetrySchedules

    package init(_ configuration: Configuration) {
        redactor = configuration.redactor
        intake = IntakeSettings(configuration)
        claim = ClaimSettings(configuration)
        routes = RouteSettings(configuration)
        requests = RequestSettings(configuration)
        authorization = AuthorizationSettings(configuration)
        admission = AdmissionSettings(configuration)
        attention = AttentionRequeueSettings(configuration)
        breaker = BreakerSettings(configuration)
        batchSizes = BatchSizeSettings(configuration)
        settle = SettleSettings(configuration)
        notifier = NotifierSettings(configuration)
        delivery = DeliveryPassSettings(configuration)
        schedules = RetrySchedules(configuration)
    }

    /// Each stage and the keys it reads, as docs/architecture.md's table
    /// names them.
    package static let stageKeys: [(stage: String, keys: [ConfigKey])] = [
        ("Round", keys),
        ("Intake", IntakeSettings.keys),
        ("RouteStep", RouteSettings.keys),
        ("AttentionRequeue", AttentionRequeueSettings.keys),
        ("RetrySchedules", RetrySchedules.keys),
        ("DeliveryPass", DeliveryPassSettings.keys),
        ("Admission", AdmissionSettings.keys),
        ("Claimer", ClaimSettings.keys),
        ("BatchSizes", BatchSizeSettings.keys),
        ("RequestBuilder", RequestSettings.keys),
        ("DeliveryAuthorization", AuthorizationSettings.keys),
        ("Breaker", BreakerSettings.keys),
        ("Settler", SettleSettings.keys),
        ("Notifier", NotifierSettings.keys),
    ]
}
