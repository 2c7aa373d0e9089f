import CourierIdentifiers
import CourierPosix
import CourierRecords
import CourierSupport
import Foundation
import Glibc

extension Configuration {
    /// Where the configuration is looked for, first found wins:
    /// `--config FILE`, `$COURIER_CONFIG`, `./etc/courier.conf`,
    /// `/etc/courier/courier.conf`.
    package static func locate(explicit: String?, environment: [String: String]) throws(ConfigError) -> String {
        if let explicit { return explicit }
        if let fromEnvironment = environment["COURIER_CONFIG"], !fromEnvironment.isEmpty { return fromEnvironment }
        let candidates = ["./etc/courier.conf", "/etc/courier/courier.conf"]
        for candidate in candidates where access(candidate, F_OK) == 0 { return candidate }
        throw .notFound(searched: ["--config", "$COURIER_CONFIG"] + candidates)
    }

    /// Reads and validates a configuration file. With `readingSecrets`,
    /// token and signing-secret files are read too, so a round refuses a
    /// bad one before anything moves.
    package static func load(file: String, readingSecrets: Bool) throws(ConfigError) -> Configuration {
        let bytes: [UInt8]
        do throws(SystemError) {
            let directory = try DirectoryHandle.open(path: ".")
            let handle = try directory.openFile(FileName(file), flags: O_RDONLY)
            bytes = try handle.read(upTo: (1 << 20) + 1)
            // Half a configuration would be read as a different one.
            guard bytes.count <= 1 << 20 else { throw SystemError("read", path: file, Errno(EFBIG)) }
        } catch {
            // ConfigError names the file itself; the errno is what it needs.
            throw .unreadable(file: file, error.errno)
        }
        var configuration = try parse(bytes, file: file)
        if readingSecrets { try configuration.loadSecrets() }
        return configuration
    }

    /// Validates INI text; relative paths in it are resolved against the
    /// directory of `file`, so the configuration means the same thing
    /// whatever directory courier is started from.
    package static func parse(_ bytes: [UInt8], file: String) throws(ConfigError) -> Configuration {
        let entries = try IniReader.parse(bytes, file: file)
        var seenSections: Set<String> = []
        for header in IniReader.sectionHeaders(bytes) where !seenSections.insert(header.name).inserted {
            throw .syntax(file: file, line: header.line, reason: "[\(header.name)] appears twice")
        }
        let base = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
        var configuration = Configuration(spool: defaultSpool, subscribers: [])
        configuration.file = file
        var builders: [SubscriberBuilder] = []
        var catalogBuilders: [CatalogBuilder] = []
        var seenCourierKeys: Set<String> = []

        for entry in entries {
            func fail(_ reason: String) -> ConfigError {
                .invalid(file: file, line: entry.line, section: entry.section, key: entry.key, reason: reason)
            }
            if entry.section == "courier" {
                guard seenCourierKeys.insert(entry.key).inserted else { throw fail("given twice") }
                try configuration.set(entry, base: base, fail: fail)
            } else if entry.section.hasPrefix("subscriber ") {
                let rawName = String(entry.section.dropFirst("subscriber ".count)).trimmingSpaces
                guard let name = SubscriberName(rawName) else {
                    throw fail("subscriber name `\(rawName)` must be 1–64 of \(NameBytes.wordClass)")
                }
                if builders.last?.name != name { builders.append(SubscriberBuilder(name: name, line: entry.line)) }
                try builders[builders.count - 1].set(entry, base: base, fail: fail)
            } else if entry.section.hasPrefix("catalog ") {
                let rawName = String(entry.section.dropFirst("catalog ".count)).trimmingSpaces
                guard let name = SubscriberName(rawName) else {
                    throw fail("catalog name `\(rawName)` must be 1–64 of \(NameBytes.wordClass)")
                }
                if catalogBuilders.last?.name != name {
                    catalogBuilders.append(CatalogBuilder(name: name, line: entry.line))
                }
                try catalogBuilders[catalogBuilders.count - 1].set(entry, base: base, fail: fail)
            } else if entry.section.isEmpty {
                throw .syntax(file: file, line: entry.line, reason: "`\(entry.key)` is outside any [section]")
            } else {
                throw .syntax(
                    file: file, line: entry.line,
                    reason:
                        "unknown section [\(entry.section)] (expected [courier], [subscriber NAME] or [catalog NAME])")
            }
        }
        configuration.subscribers = try builders.map { builder throws(ConfigError) in
            try builder.build(file: file, retrySchedule: configuration.defaultRetrySchedule)
        }
        configuration.catalogs = try catalogBuilders.map { builder throws(ConfigError) in try builder.build(file: file)
        }
        guard !configuration.subscribers.isEmpty || !configuration.catalogs.isEmpty else {
            throw .noSubscribers(file: file)
        }
        if configuration.shared, configuration.workerName == nil,
            let problem = WorkerID.problem(with: configuration.deviceID),
            let line = entries.first(where: { $0.section == "courier" && $0.key == "shared" })?.line
        {
            throw .invalid(
                file: file, line: line, section: "courier", key: "shared",
                reason: "device-id `\(configuration.deviceID)` cannot name a worker (\(problem)); set worker-id")
        }
        return configuration
    }

    /// One `[courier]` key.
    private mutating func set(_ entry: IniEntry, base: String, fail: (String) -> ConfigError) throws(ConfigError) {
        let value = entry.value
        guard let key = CourierKey(rawValue: entry.key) else { throw fail("unknown key") }
        switch key {
        case .spool:
            guard !value.isEmpty else { throw fail("is empty") }
            spool = Self.resolve(value, against: base)
        case .deviceID:
            guard DeviceID.isValid(value) else { throw fail("must be 1–64 of \(NameBytes.idClass)") }
            deviceID = value
        case .shared: shared = try boolean(value, fail)
        case .workerID:
            if let problem = WorkerID.problem(with: value) { throw fail(problem) }
            workerName = value
        case .notify:
            guard let mode = NotifyMode(rawValue: value) else { throw fail("must be always, failures or off") }
            notify = mode
        case .notifyCommand:
            guard !value.isEmpty else { throw fail("is empty") }
            notifyCommand = Self.resolve(value, against: base)
        case .notifyTimeout: notifyTimeout = try Self.positiveDuration(value, fail)
        case .metricsFile:
            guard !value.isEmpty else { throw fail("is empty") }
            metricsFile = Self.resolve(value, against: base)
        case .retention: retention = try Self.duration(value, fail)
        case .failedRetention: failedRetention = try Self.positiveDuration(value, fail)
        case .routeWait: routeWait = try Self.duration(value, fail)
        case .settle: settle = try Self.duration(value, fail)
        case .backgroundTimeout: backgroundTimeout = try Self.positiveDuration(value, fail)
        case .foregroundTimeout: foregroundTimeout = try Self.positiveDuration(value, fail)
        case .backoff:
            let steps = value.split(separator: " ", omittingEmptySubsequences: true)
            guard (1...10).contains(steps.count) else {
                throw fail("give 1 to 10 durations, e.g. `2s 4s 8s 16s`")
            }
            backoff = try steps.map { step throws(ConfigError) in try Self.duration(String(step), fail)
            }
        case .breaker: breaker = try Self.breaker(value, fail)
        case .retrySchedule: defaultRetrySchedule = try Self.retrySchedule(value, fail)
        case .maxRecordSize:
            guard let size = Units.size(value), (1...(64 << 20)).contains(size) else {
                throw fail("must be a size from 1 to 64MiB, e.g. `1MiB`")
            }
            maxRecordSize = size
        }
    }

    /// Reads every subscriber's token and signing secret.
    package mutating func loadSecrets() throws(ConfigError) {
        let file = self.file ?? "configuration"
        for index in catalogs.indices {
            if let path = catalogs[index].tokenFile {
                catalogs[index].token = try Self.readToken(path, file: file, line: catalogs[index].line)
            }
            if let oauth = catalogs[index].oauth { catalogs[index].oauth = try Self.loadSecret(of: oauth, file: file) }
        }
        for index in subscribers.indices {
            let subscriber = subscribers[index]
            if let path = subscriber.tokenFile {
                subscribers[index].token = try Self.readToken(path, file: file, line: subscriber.tokenFileLine)
            }
            if let path = subscriber.signingSecretFile {
                let text = try Self.readSecret(
                    path, file: file, line: subscriber.signingSecretFileLine, key: "signing-secret-file")
                guard let secret = WebhookSigner.decodeSecret(text) else {
                    throw .secret(
                        file: file, line: subscriber.signingSecretFileLine, key: "signing-secret-file", path: path,
                        reason: "expected `whsec_` followed by base64")
                }
                subscribers[index].signingSecret = secret
            }
            if let oauth = subscriber.oauth { subscribers[index].oauth = try Self.loadSecret(of: oauth, file: file) }
        }
    }

    /// The client secret: printable ASCII (RFC 6749 §A.2), as it goes
    /// into the Basic credentials.
    private static func loadSecret(of client: OAuthClient, file: String) throws(ConfigError) -> OAuthClient {
        guard let path = client.secretFile else { return client }
        let key = "oauth-client-secret-file"
        let text = try readSecret(path, file: file, line: client.secretFileLine, key: key)
        guard OAuthClient.isVisible(text) else {
            throw .secret(
                file: file, line: client.secretFileLine, key: key, path: path,
                reason: "the secret must be one line of printable ASCII")
        }
        var loaded = client
        loaded.secret = text
        return loaded
    }

    /// Secret files anyone on the machine can read: worth a warning.
    package func secretFileWarnings() -> [String] {
        var warnings: [String] = []
        var files: [(section: String, key: String, path: String?)] = []
        for subscriber in subscribers {
            files += [
                ("subscriber \(subscriber.name)", "token-file", subscriber.tokenFile),
                ("subscriber \(subscriber.name)", "signing-secret-file", subscriber.signingSecretFile),
                ("subscriber \(subscriber.name)", "oauth-client-secret-file", subscriber.oauth?.secretFile),
            ]
        }
        for catalog in catalogs {
            files += [
                ("catalog \(catalog.name)", "token-file", catalog.tokenFile),
                ("catalog \(catalog.name)", "oauth-client-secret-file", catalog.oauth?.secretFile),
            ]
        }
        for (section, key, path) in files {
            guard let path else { continue }
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & 0o004 != 0 else { continue }
            let mode = String(info.st_mode & 0o777, radix: 8)
            warnings.append("[\(section)] \(key) \(path) is readable by others (mode 0\(mode)); chmod o-r it")
        }
        return warnings
    }

    /// A bearer token: it becomes `Authorization: Bearer TOKEN`, so it is
    /// checked as that header now, and must be one word.
    private static func readToken(_ path: String, file: String, line: Int) throws(ConfigError) -> String {
        let text = try readSecret(path, file: file, line: line, key: "token-file")
        func refuse(_ reason: String) -> ConfigError {
            .secret(file: file, line: line, key: "token-file", path: path, reason: reason)
        }
        guard !text.isEmpty else { throw refuse("the file is empty") }
        do { _ = try HTTPHeaderField(name: "Authorization", value: "Bearer " + text) } catch {
            throw refuse(error.description)
        }
        guard !text.contains(" ") && !text.contains("\t") else {
            throw refuse("the token must be one line of printable ASCII without spaces")
        }
        return text
    }

    static func readSecret(_ path: String, file: String, line: Int, key: String) throws(ConfigError) -> String {
        do throws(SystemError) {
            let directory = try DirectoryHandle.open(path: ".")
            let handle = try directory.openFile(FileName(path), flags: O_RDONLY)
            let bytes = try handle.read(upTo: 64 * 1024 + 1)
            guard bytes.count <= 64 * 1024 else { throw SystemError("read", path: path, Errno(EFBIG)) }
            return String(decoding: bytes, as: UTF8.self).trimmingSpaces
        } catch {
            // ConfigError names the file, line and key itself.
            throw .secret(file: file, line: line, key: key, path: path, reason: error.errno.description)
        }
    }

    /// An absolute, normalised path: `etc/../spool` from `/srv` is `/srv/spool`.
    static func resolve(_ path: String, against base: String) -> String {
        let joined = path.hasPrefix("/") ? path : base + "/" + path
        return URL(fileURLWithPath: joined).standardizedFileURL.path
    }

    private static func duration(_ text: String, _ fail: (String) -> ConfigError) throws(ConfigError) -> Duration {
        guard let duration = Units.duration(text) else {
            throw fail("`\(text)` is not a duration (use 500ms, 15s, 5m, 1h or 183d)")
        }
        return duration
    }

    /// `breaker = 5` or `off`.
    fileprivate static func breaker(_ value: String, _ fail: (String) -> ConfigError) throws(ConfigError)
        -> BreakerLimit
    {
        if value == "off" { return .off }
        guard let count = Int(value), (1...1000).contains(count) else {
            throw fail("must be a number from 1 to 1000, or off")
        }
        return .after(count)
    }

    /// The most steps a `retry-schedule` may have: as many deferrals as an
    /// entry's stamp counts (`DeferralStamp.limit`, in the spool, which the
    /// configuration does not see; `RetryScheduleTests` holds the two equal).
    package static let maximumRetrySteps = 20

    /// `retry-schedule = 1m 5m 30m 2h 6h`: each step's wait, in order;
    /// `off`: none (nil), the first rule's one background attempt.
    fileprivate static func retrySchedule(_ value: String, _ fail: (String) -> ConfigError) throws(ConfigError)
        -> [Duration]?
    {
        if value == "off" { return nil }
        let steps = value.split(separator: " ", omittingEmptySubsequences: true)
        guard (1...maximumRetrySteps).contains(steps.count) else {
            throw fail("give 1 to \(maximumRetrySteps) durations, e.g. `1m 5m 30m 2h 6h`, or off")
        }
        return try steps.map { step throws(ConfigError) in try positiveDuration(String(step), fail) }
    }

    private static func positiveDuration(_ text: String, _ fail: (String) -> ConfigError) throws(ConfigError)
        -> Duration
    {
        let value = try duration(text, fail)
        guard value > .zero else { throw fail("must be more than 0") }
        return value
    }
}

/// Collects one `[subscriber NAME]` section's keys before validation.
private struct SubscriberBuilder {
    let name: SubscriberName
    let line: Int
    var url: String?
    var kinds: Set<String>?
    var tokenFile: String?
    var headers: [HTTPHeaderField] = []
    var concurrency = 8
    var caFile: String?
    var signingSecretFile: String?
    var mode = DeliveryMode.single
    var batch = BatchSettings()
    var gzip = false
    var oauth = OAuthKeys()
    /// Given in the section: nil, the `[courier]` default; `.some(nil)`,
    /// `retry-schedule = off`.
    var retrySchedule: [Duration]??
    var breaker: BreakerLimit?
    var lines: [String: Int] = [:]

    /// Headers courier sets itself; configuring them would be ambiguous.
    static let reservedHeaders: Set<String> = [
        "content-type", "content-length", "transfer-encoding", "host", "idempotency-key", "user-agent",
        "courier-device", "courier-session", "webhook-id", "webhook-timestamp", "webhook-signature", "expect",
        "connection",
    ]

    init(name: SubscriberName, line: Int) {
        self.name = name
        self.line = line
    }

    mutating func set(_ entry: IniEntry, base: String, fail: (String) -> ConfigError) throws(ConfigError) {
        let value = entry.value
        if entry.key != "header" {
            guard lines[entry.key] == nil else { throw fail("given twice") }
        }
        guard let key = SubscriberKey(rawValue: entry.key) else { throw fail("unknown key") }
        lines[entry.key] = entry.line
        switch key {
        case .oauthTokenURL, .oauthClientID, .oauthClientSecretFile, .oauthScope:
            try oauth.set(entry, base: base, fail: fail)
        case .url:
            url = try httpURL(value, fail)
        case .kinds:
            kinds = try Self.kinds(value, fail)
        case .tokenFile:
            guard !value.isEmpty else { throw fail("is empty") }
            tokenFile = Configuration.resolve(value, against: base)
        case .header:
            headers.append(try Self.header(value, fail))
        case .concurrency:
            guard let number = Int(value), (1...256).contains(number) else {
                throw fail("must be a number from 1 to 256")
            }
            concurrency = number
        case .caFile:
            guard !value.isEmpty else { throw fail("is empty") }
            caFile = Configuration.resolve(value, against: base)
        case .signingSecretFile:
            guard !value.isEmpty else { throw fail("is empty") }
            signingSecretFile = Configuration.resolve(value, against: base)
        case .mode:
            guard let parsed = DeliveryMode(rawValue: value) else { throw fail("must be single or batch") }
            mode = parsed
        case .batchSize:
            guard let number = Int(value), (1...500).contains(number) else {
                throw fail("must be a number from 1 to 500")
            }
            batch.size = number
        case .atomic:
            batch.atomic = try boolean(value, fail)
        case .maxBatchBytes:
            guard let size = Units.size(value), (1024...(64 << 20)).contains(size) else {
                throw fail("must be a size from 1KiB to 64MiB, e.g. `2MiB`")
            }
            batch.maxBytes = size
        case .gzip:
            gzip = try boolean(value, fail)
        case .retrySchedule:
            retrySchedule = .some(try Configuration.retrySchedule(value, fail))
        case .breaker:
            breaker = try Configuration.breaker(value, fail)
        }
    }

    /// `kinds = workout sleep` (or `*`, every kind: nil).
    private static func kinds(_ value: String, _ fail: (String) -> ConfigError) throws(ConfigError) -> Set<String>? {
        let words = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard !words.isEmpty else { throw fail("is empty (leave it out, or write `*`, for every kind)") }
        if words == ["*"] { return nil }
        if let bad = words.first(where: { !RecordKind.isValid($0) }) {
            throw fail("`\(bad)` is not a kind (1–64 of \(NameBytes.wordClass))")
        }
        return Set(words)
    }

    /// `header = Name: value`, checked as the header it becomes.
    private static func header(_ value: String, _ fail: (String) -> ConfigError) throws(ConfigError) -> HTTPHeaderField
    {
        guard let colon = value.firstIndex(of: ":") else { throw fail("must be `Name: value`") }
        let name = String(value[..<colon]).trimmingSpaces
        let fieldValue = String(value[value.index(after: colon)...]).trimmingSpaces
        guard !reservedHeaders.contains(name.lowercased()) else { throw fail("\(name) is set by courier itself") }
        do { return try HTTPHeaderField(name: name, value: fieldValue) } catch { throw fail(error.description) }
    }

    /// `retrySchedule`: the `[courier]` one, for a section without its own.
    func build(file: String, retrySchedule defaultSchedule: [Duration]?) throws(ConfigError) -> Subscriber {
        if mode == .single, let key = ["batch-size", "atomic", "max-batch-bytes"].first(where: { lines[$0] != nil }) {
            throw .invalid(
                file: file, line: lines[key] ?? line, section: "subscriber \(name)", key: key,
                reason: "only applies with `mode = batch`")
        }
        guard let url else { throw .missing(file: file, section: "subscriber \(name)", key: "url") }
        if tokenFile != nil, headers.contains(where: { $0.name.lowercased() == "authorization" }) {
            throw .invalid(
                file: file, line: line, section: "subscriber \(name)", key: "header",
                reason: "Authorization is given both by token-file and by a header line")
        }
        let section = "subscriber \(name)"
        try oauth.refuseBeside(tokenFile: tokenFile, headers: headers, file: file, section: section, line: line)
        var subscriber = Subscriber(
            name: name, url: url, kinds: kinds, tokenFile: tokenFile, headers: headers, concurrency: concurrency,
            caFile: caFile, signingSecretFile: signingSecretFile, line: line)
        subscriber.mode = mode
        subscriber.batch = batch
        subscriber.gzip = gzip
        subscriber.oauth = try oauth.build(file: file, section: section)
        subscriber.retrySchedule = retrySchedule ?? defaultSchedule
        subscriber.breaker = breaker
        subscriber.tokenFileLine = lines["token-file"] ?? line
        subscriber.signingSecretFileLine = lines["signing-secret-file"] ?? line
        return subscriber
    }
}

/// An http:// or https:// URL with a host part and no spaces or controls.
func httpURL(_ value: String, _ fail: (String) -> ConfigError) throws(ConfigError) -> String {
    let lower = value.lowercased()
    guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), value.count > 8,
        !value.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
    else { throw fail("must be an http:// or https:// URL without spaces") }
    return value
}

/// `true`/`false` (also yes/no, on/off, 1/0), as INI files write them.
private func boolean(_ value: String, _ fail: (String) -> ConfigError) throws(ConfigError) -> Bool {
    switch value.lowercased() {
    case "true", "yes", "on", "1": return true
    case "false", "no", "off", "0": return false
    default: throw fail("must be true or false")
    }
}

/// Collects one `[catalog NAME]` section's keys before validation.
private struct CatalogBuilder {
    let name: SubscriberName
    let line: Int
    var url: String?
    var pageSize = 500
    var ackURL: String?
    var cursor: CatalogCursor?
    var maxPages = Catalog.defaultMaxPages
    var tokenFile: String?
    var caFile: String?
    var oauth = OAuthKeys()
    var seen: Set<String> = []

    init(name: SubscriberName, line: Int) {
        self.name = name
        self.line = line
    }

    mutating func set(_ entry: IniEntry, base: String, fail: (String) -> ConfigError) throws(ConfigError) {
        guard let key = CatalogKey(rawValue: entry.key) else { throw fail("unknown key") }
        guard seen.insert(entry.key).inserted else { throw fail("given twice") }
        let value = entry.value
        switch key {
        case .oauthTokenURL, .oauthClientID, .oauthClientSecretFile, .oauthScope:
            try oauth.set(entry, base: base, fail: fail)
        case .url, .ackURL:
            _ = try httpURL(value, fail)
            if key == .url {
                url = value.hasSuffix("/") ? String(value.dropLast()) : value
            } else {
                ackURL = value
            }
        case .pageSize:
            guard let number = Int(value), (1...10_000).contains(number) else {
                throw fail("must be a number from 1 to 10000")
            }
            pageSize = number
        case .since:
            guard let chosen = CatalogCursor(rawValue: value) else {
                throw fail("must be \(CatalogCursor.allCases.map(\.rawValue).joined(separator: " or "))")
            }
            cursor = chosen
        case .maxPages:
            guard value.allSatisfy(\.isASCIIDigit), let number = Int(value), (1...1_000_000).contains(number) else {
                throw fail("must be a number from 1 to 1000000")
            }
            maxPages = number
        case .tokenFile:
            guard !value.isEmpty else { throw fail("is empty") }
            tokenFile = Configuration.resolve(value, against: base)
        case .caFile:
            guard !value.isEmpty else { throw fail("is empty") }
            caFile = Configuration.resolve(value, against: base)
        }
    }

    func build(file: String) throws(ConfigError) -> Catalog {
        let section = "catalog \(name)"
        guard let url else { throw .missing(file: file, section: section, key: "url") }
        try oauth.refuseBeside(tokenFile: tokenFile, headers: [], file: file, section: section, line: line)
        var catalog = Catalog(
            name: name, url: url, pageSize: pageSize, ackURL: ackURL, cursor: cursor, maxPages: maxPages,
            tokenFile: tokenFile, caFile: caFile, line: line)
        catalog.oauth = try oauth.build(file: file, section: section)
        return catalog
    }
}
