import CourierIdentifiers
import CourierSupport
import Glibc

/// When to run `notify-command` after a background round.
package enum NotifyMode: String, Sendable, CaseIterable {
    case always, failures, off
}

/// Why a name or value cannot be an HTTP header field.
package enum HeaderFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    case badName(String)
    case controlByte(name: String, byte: UInt8)

    package var description: String {
        switch self {
        case .badName(let name):
            return "`\(name.prefix(64))` is not a header name (letters, digits and !#$%&'*+-.^_`|~)"
        case .controlByte(let name, let byte):
            return "the value for \(name) holds a control byte (0x\(String(byte, radix: 16))); "
                + "CR, LF, NUL and other controls would let it add or split headers"
        }
    }
}

/// One header as it goes on the wire. Every header courier sends, from a
/// `header =` line, a token file, a record's `etag` or courier itself, is
/// made through this initialiser, so this is the one place that stops a
/// value from adding headers or smuggling a request (RFC 9110 §5.5: no
/// CR, LF, NUL or other control byte; tab is allowed).
package struct HTTPHeaderField: Sendable, Equatable {
    package let name: String
    package let value: String

    package init(name: String, value: String) throws(HeaderFieldError) {
        guard !name.isEmpty, name.utf8.allSatisfy(NameBytes.isToken) else { throw .badName(name) }
        try self.init(checkedName: name, value: value)
    }

    /// A field whose name is written in courier's own source, with a value
    /// from outside, checked: what each request adds (its Idempotency-Key,
    /// If-Match, signature). The name is checked by debug builds, so a bad
    /// one is caught by the first test run; a request does not pay for
    /// checking a constant.
    package init(constant name: StaticString, value: String) throws(HeaderFieldError) {
        let name = name.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        assert(!name.isEmpty && name.utf8.allSatisfy(NameBytes.isToken), "bad header name \(name)")
        try self.init(checkedName: name, value: value)
    }

    private init(checkedName name: String, value: String) throws(HeaderFieldError) {
        if let byte = Self.controlByte(in: value) { throw .controlByte(name: name, byte: byte) }
        self.name = name
        self.value = value
    }

    /// A field written in courier's own source: both parts are constants,
    /// so a bad one is a programming error caught by the first test run.
    package init(constant name: StaticString, _ value: StaticString) {
        do { try self.init(name: "\(name)", value: "\(value)") } catch { preconditionFailure("\(error)") }
    }

    package var line: String { "\(name): \(value)" }

    /// The first byte that may not stand in a field value, if any.
    private static func controlByte(in value: String) -> UInt8? {
        // Through the UTF-8 buffer: the `utf8` view walked byte by byte
        // cost more than the rest of the field.
        value.withUTF8Bytes { bytes in bytes.first { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F } }
    }
}

/// How a subscriber takes items: one POST each, or POSTed in batches.
package enum DeliveryMode: String, Sendable, Codable {
    case single
    case batch
}

/// `mode = batch` settings (docs/design.md §8).
package struct BatchSettings: Sendable, Equatable {
    /// Items per batch at most, 1–500; the size in force is halved by a
    /// timeout and grows back (`BatchSizes`, in the round).
    package var size = 100
    /// `?atomic=true`: the whole batch is one outcome.
    package var atomic = false
    /// A batch body is split before it grows past this.
    package var maxBytes = 2 << 20

    package init(size: Int = 100, atomic: Bool = false, maxBytes: Int = 2 << 20) {
        self.size = size
        self.atomic = atomic
        self.maxBytes = maxBytes
    }
}

/// What a catalog's delta requests send as `since`: the last page's
/// `server_time`, for backends that key their deltas by time as the sync
/// architecture does (the default for a catalog never synced otherwise),
/// or the last `version` the server gave.
package enum CatalogCursor: String, Sendable, CaseIterable {
    case version
    case serverTime = "server-time"
}

/// `[catalog NAME]`: a server-owned collection pulled as deltas.
package struct Catalog: Sendable {
    package let name: SubscriberName
    /// The base URL; pages come from `{url}/delta`.
    package let url: String
    package let pageSize: Int
    package let ackURL: String?
    /// `since = version | server-time`; nil when the section does not say,
    /// and the sync decides by the catalog's state (`cursor(resuming:)`).
    package let configuredCursor: CatalogCursor?
    /// `max-pages`: a sync that would fetch more pages than this fails.
    package let maxPages: Int
    package let tokenFile: String?
    package internal(set) var token: String?
    /// `ca-file`, as for subscribers: libcurl's CA file for `url` and `ack-url`.
    package let caFile: String?
    /// `oauth-*`: tokens from a client-credentials grant instead of `token-file`.
    package var oauth: OAuthClient?
    package let line: Int

    /// Ten thousand pages of the largest page size is a hundred million
    /// items, more than a device keeps; a server still paging then is going
    /// round in circles.
    package static let defaultMaxPages = 10_000

    package init(
        name: SubscriberName, url: String, pageSize: Int = 500, ackURL: String? = nil, cursor: CatalogCursor? = nil,
        maxPages: Int = Catalog.defaultMaxPages, token: String? = nil, caFile: String? = nil
    ) {
        self.name = name
        self.url = url
        self.pageSize = pageSize
        self.ackURL = ackURL
        self.configuredCursor = cursor
        self.maxPages = maxPages
        self.tokenFile = nil
        self.token = token
        self.caFile = caFile
        self.line = 0
    }

    init(
        name: SubscriberName, url: String, pageSize: Int, ackURL: String?, cursor: CatalogCursor?, maxPages: Int,
        tokenFile: String?, caFile: String?, line: Int
    ) {
        self.name = name
        self.url = url
        self.pageSize = pageSize
        self.ackURL = ackURL
        self.configuredCursor = cursor
        self.maxPages = maxPages
        self.tokenFile = tokenFile
        self.token = nil
        self.caFile = caFile
        self.line = line
    }
}

/// `[subscriber NAME]`: one HTTP endpoint and what it wants.
///
/// A value, kept behind one reference: a round copies its subscriber into
/// every request and answer, several times per record, and a copy is one
/// retain instead of one per field. A change (the loader's, a test's)
/// copies the storage first when another value shares it.
package struct Subscriber: Sendable {
    package var name: SubscriberName { storage.name }
    package var url: String { storage.url }
    /// Nil: every kind (`kinds` absent or `*`).
    package var kinds: Set<String>? { storage.kinds }
    package var tokenFile: String? { storage.tokenFile }
    /// The bearer token, read from `token-file` when secrets are loaded.
    package internal(set) var token: String? {
        get { storage.token }
        set { writable.token = newValue }
    }
    package var headers: [HTTPHeaderField] { storage.headers }
    package var concurrency: Int { storage.concurrency }
    package var caFile: String? { storage.caFile }
    package var signingSecretFile: String? { storage.signingSecretFile }
    /// The decoded `whsec_` secret, when secrets are loaded.
    package internal(set) var signingSecret: [UInt8]? {
        get { storage.signingSecret }
        set { writable.signingSecret = newValue }
    }
    /// `single` (default) or `batch`, with its settings.
    package var mode: DeliveryMode {
        get { storage.mode }
        set { writable.mode = newValue }
    }
    package var batch: BatchSettings {
        get { storage.batch }
        set { writable.batch = newValue }
    }
    /// `gzip = true`: bodies go out with `Content-Encoding: gzip`.
    package var gzip: Bool {
        get { storage.gzip }
        set { writable.gzip = newValue }
    }
    /// `oauth-*`: tokens from a client-credentials grant instead of `token-file`.
    package var oauth: OAuthClient? {
        get { storage.oauth }
        set { writable.oauth = newValue }
    }
    /// `retry-schedule`: how long a transiently failed entry waits in
    /// `queued/` before each further round tries it: the section's own, else
    /// the `[courier]` one. Nil (neither, or `off`) keeps the first rule: a
    /// background round tries once.
    package var retrySchedule: [Duration]? {
        get { storage.retrySchedule }
        set { writable.retrySchedule = newValue }
    }
    /// `breaker` for this subscriber; nil: the `[courier]` one.
    package var breaker: BreakerLimit? {
        get { storage.breaker }
        set { writable.breaker = newValue }
    }
    package var line: Int { storage.line }
    /// Where `token-file` and `signing-secret-file` were given, for errors.
    var tokenFileLine: Int {
        get { storage.tokenFileLine }
        set { writable.tokenFileLine = newValue }
    }
    var signingSecretFileLine: Int {
        get { storage.signingSecretFileLine }
        set { writable.signingSecretFileLine = newValue }
    }

    private var storage: Storage

    /// The storage, this value's own before it is changed.
    private var writable: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    package func takes(kind: String) -> Bool { kinds?.contains(kind) ?? true }

    package init(
        name: SubscriberName, url: String, kinds: Set<String>? = nil, token: String? = nil,
        headers: [HTTPHeaderField] = [], concurrency: Int = 8, caFile: String? = nil, signingSecret: [UInt8]? = nil
    ) {
        storage = Storage(
            name: name, url: url, kinds: kinds, tokenFile: nil, headers: headers, concurrency: concurrency,
            caFile: caFile, signingSecretFile: nil, line: 0)
        storage.token = token
        storage.signingSecret = signingSecret
    }

    init(
        name: SubscriberName, url: String, kinds: Set<String>?, tokenFile: String?, headers: [HTTPHeaderField],
        concurrency: Int, caFile: String?, signingSecretFile: String?, line: Int
    ) {
        storage = Storage(
            name: name, url: url, kinds: kinds, tokenFile: tokenFile, headers: headers, concurrency: concurrency,
            caFile: caFile, signingSecretFile: signingSecretFile, line: line)
    }

    /// Shared between values and changed only through `writable`, when one
    /// value holds it alone: what makes it safe to send across threads, as
    /// an array's buffer is.
    private final class Storage: @unchecked Sendable {
        let name: SubscriberName
        let url: String
        let kinds: Set<String>?
        let tokenFile: String?
        var token: String?
        let headers: [HTTPHeaderField]
        let concurrency: Int
        let caFile: String?
        let signingSecretFile: String?
        var signingSecret: [UInt8]?
        var mode: DeliveryMode = .single
        var batch = BatchSettings()
        var gzip = false
        var oauth: OAuthClient?
        var retrySchedule: [Duration]?
        var breaker: BreakerLimit?
        let line: Int
        var tokenFileLine = 0
        var signingSecretFileLine = 0

        init(
            name: SubscriberName, url: String, kinds: Set<String>?, tokenFile: String?, headers: [HTTPHeaderField],
            concurrency: Int, caFile: String?, signingSecretFile: String?, line: Int
        ) {
            self.name = name
            self.url = url
            self.kinds = kinds
            self.tokenFile = tokenFile
            self.headers = headers
            self.concurrency = concurrency
            self.caFile = caFile
            self.signingSecretFile = signingSecretFile
            self.line = line
        }

        func copy() -> Storage {
            let copy = Storage(
                name: name, url: url, kinds: kinds, tokenFile: tokenFile, headers: headers,
                concurrency: concurrency, caFile: caFile, signingSecretFile: signingSecretFile, line: line)
            copy.token = token
            copy.signingSecret = signingSecret
            copy.mode = mode
            copy.batch = batch
            copy.gzip = gzip
            copy.oauth = oauth
            copy.retrySchedule = retrySchedule
            copy.breaker = breaker
            copy.tokenFileLine = tokenFileLine
            copy.signingSecretFileLine = signingSecretFileLine
            return copy
        }
    }
}

/// `breaker`: how many requests in a row may get no answer (a network
/// error or a timeout) before a round starts no more requests to that
/// subscriber; `off` never stops.
package enum BreakerLimit: Sendable, Equatable {
    case after(Int)
    case off
}

/// `etc/courier.conf`, parsed, typed and validated.
package struct Configuration: Sendable {
    /// The file it came from; nil for one built in code (tests, demo).
    package var file: String?
    package var spool: String
    package var deviceID: String
    /// `shared = yes`: several workers run rounds on this spool at once
    /// (processes on one host, or hosts sharing it on a network file
    /// system); each claims into `sending/WORKER/` and appends to its own
    /// ledger files.
    package var shared = false
    /// `worker-id` (or `COURIER_WORKER_ID`); `device-id` when unset.
    package var workerName: String?

    /// This worker, on a shared spool; nil on a spool with one worker.
    package var worker: WorkerID? {
        guard shared else { return nil }
        return try? WorkerID(workerName ?? deviceID)
    }
    package var notify: NotifyMode
    package var notifyCommand: String?
    /// How long a notifier may run before its process group is stopped.
    package var notifyTimeout: Duration = .seconds(30)
    package var retention: Duration
    /// `failed-retention`: how long entries stay in `failed/` before `prune`
    /// removes them; nil (the default) keeps them until a person acts.
    package var failedRetention: Duration?
    /// Six months of ledger and sent/ entries: long enough to answer "did it
    /// go?" for anything a person still remembers.
    package static let defaultRetention: Duration = .seconds(183 * 86_400)
    package var routeWait: Duration
    package var settle: Duration
    package var backgroundTimeout: Duration
    package var foregroundTimeout: Duration
    package var backoff: [Duration]
    /// The `[courier]` breaker; a subscriber's own `breaker` wins.
    package var breaker: BreakerLimit = .after(5)
    package var maxRecordSize: Int
    /// Prometheus textfile to replace after each round; nil: none.
    package var metricsFile: String?
    package var subscribers: [Subscriber]
    package var catalogs: [Catalog] = []
    /// The `[courier]` retry-schedule: every subscriber without one of its
    /// own takes it (resolved at load, into `Subscriber.retrySchedule`);
    /// nil: none.
    package var defaultRetrySchedule: [Duration]?

    package static let defaultSpool = "/var/spool/courier"

    /// The keys `redactor` is made of: whatever reads it reads these.
    package static let redactorKeys: [ConfigKey] = [
        .subscriber(.tokenFile), .subscriber(.url), .subscriber(.oauthTokenURL), .subscriber(.oauthClientID),
        .subscriber(.oauthClientSecretFile), .catalog(.tokenFile), .catalog(.url), .catalog(.ackURL),
        .catalog(.oauthTokenURL), .catalog(.oauthClientID), .catalog(.oauthClientSecretFile),
    ]

    /// Every secret this configuration knows, for whatever is written down.
    package var redactor: Redactor {
        var redactor = Redactor()
        for subscriber in subscribers {
            if let token = subscriber.token { redactor.add(token) }
            redactor.addCredentials(of: subscriber.url)
            if let oauth = subscriber.oauth { Self.add(oauth, to: &redactor) }
        }
        for catalog in catalogs {
            if let token = catalog.token { redactor.add(token) }
            redactor.addCredentials(of: catalog.url)
            if let ack = catalog.ackURL { redactor.addCredentials(of: ack) }
            if let oauth = catalog.oauth { Self.add(oauth, to: &redactor) }
        }
        return redactor
    }

    /// An OAuth client's secret, as read and in the Basic credentials
    /// made of it. The tokens it gets are added where they are used (the
    /// round's and the sync's ledgers), as they arrive.
    private static func add(_ oauth: OAuthClient, to redactor: inout Redactor) {
        if let secret = oauth.secret {
            redactor.add(secret)
            redactor.add(FormEncoding.encode(secret))
        }
        if let basic = oauth.basicCredentials { redactor.add(basic) }
        redactor.addCredentials(of: oauth.tokenURL)
    }

    package init(spool: String, subscribers: [Subscriber]) {
        self.file = nil
        self.spool = spool
        self.deviceID = Self.hostName()
        self.notify = .always
        self.notifyCommand = nil
        // Six months: long enough to answer "did that reach them in
        // spring?", short enough that the ledger stays small.
        self.retention = Self.defaultRetention
        self.routeWait = .seconds(3600)
        // A plain `cp` of a large file can take a moment; 5 s of quiet
        // is the sign that it has finished.
        self.settle = .seconds(5)
        self.backgroundTimeout = .seconds(15)
        self.foregroundTimeout = .seconds(30)
        self.backoff = [.seconds(2), .seconds(4), .seconds(8), .seconds(16)]
        self.maxRecordSize = 1 << 20
        self.metricsFile = nil
        self.subscribers = subscribers
    }

    package func subscriber(named name: SubscriberName) -> Subscriber? {
        subscribers.first { $0.name == name }
    }

    /// After how many answerless requests in a row a round stops sending
    /// to `subscriber`; nil: never.
    package func breakerLimit(for subscriber: Subscriber) -> Int? {
        switch subscriber.breaker ?? breaker {
        case .after(let count): return count
        case .off: return nil
        }
    }

    package func catalog(named name: SubscriberName) -> Catalog? {
        catalogs.first { $0.name == name }
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return DeviceID.isValid(name) ? name : "localhost"
    }
}

enum DeviceID {
    static func isValid(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy(NameBytes.isID)
    }
}
