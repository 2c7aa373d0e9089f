import Foundation
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

@Suite struct ConfigTests {
    static func parse(_ text: String) throws(ConfigError) -> Configuration {
        try Configuration.parse(Array(text.utf8), file: "/etc/courier/courier.conf")
    }

    static let full = """
        [courier]
        spool = /var/spool/courier
        device-id = host-01
        notify = failures            ; always | failures | off
        notify-command = /usr/local/bin/courier-notify
        retention = 183d
        route-wait = 1h
        settle = 5s
        background-timeout = 15s
        foreground-timeout = 30s
        backoff = 2s 4s 8s 16s
        max-record-size = 1MiB

        [subscriber alpha]
        url = https://hooks.example.org/courier
        kinds = workout sleep route
        token-file = alpha.token
        header = X-Tenant: acme
        header = X-Other: two words
        concurrency = 8
        signing-secret-file = /etc/courier/alpha.whsec
        ca-file = ca.pem

        [subscriber beta]
        url = http://127.0.0.1:9/x
        """

    @Test func everyKeyIsParsedAndTyped() throws {
        let configuration = try Self.parse(Self.full)
        #expect(configuration.spool == "/var/spool/courier")
        #expect(configuration.deviceID == "host-01")
        #expect(configuration.notify == .failures)
        #expect(configuration.notifyCommand == "/usr/local/bin/courier-notify")
        #expect(configuration.retention == .seconds(183 * 86_400))
        #expect(configuration.routeWait == .seconds(3600))
        #expect(configuration.settle == .seconds(5))
        #expect(configuration.backgroundTimeout == .seconds(15))
        #expect(configuration.foregroundTimeout == .seconds(30))
        #expect(configuration.backoff == [.seconds(2), .seconds(4), .seconds(8), .seconds(16)])
        #expect(configuration.maxRecordSize == 1 << 20)
        #expect(configuration.subscribers.map(\.name.value) == ["alpha", "beta"])
        let alpha = configuration.subscribers[0]
        #expect(alpha.url == "https://hooks.example.org/courier")
        #expect(alpha.kinds == ["workout", "sleep", "route"])
        #expect(alpha.tokenFile == "/etc/courier/alpha.token")
        #expect(alpha.caFile == "/etc/courier/ca.pem")
        #expect(
            alpha.headers == [
                HTTPHeaderField(constant: "X-Tenant", "acme"), HTTPHeaderField(constant: "X-Other", "two words"),
            ])
        #expect(alpha.signingSecretFile == "/etc/courier/alpha.whsec")
        #expect(configuration.subscribers[1].kinds == nil)
        #expect(configuration.subscribers[1].concurrency == 8)
    }

    @Test("failed-retention is unset by default and a duration when given")
    func failedRetention() throws {
        #expect(try Self.parse("[subscriber a]\nurl = http://h/a\n").failedRetention == nil)
        let configuration = try Self.parse("[courier]\nfailed-retention = 30d\n[subscriber a]\nurl = http://h/a\n")
        #expect(configuration.failedRetention == .seconds(30 * 86_400))
    }

    @Test("retry-schedule is unset by default, and a subscriber's list of waits when given")
    func retrySchedule() throws {
        let configuration = try Self.parse(
            "[subscriber a]\nurl = http://h/a\n[subscriber b]\nurl = http://h/b\nretry-schedule = 1m 5m 30m 2h 6h\n")
        #expect(configuration.subscribers[0].retrySchedule == nil)
        #expect(
            configuration.subscribers[1].retrySchedule == [
                .seconds(60), .seconds(300), .seconds(1800), .seconds(7200), .seconds(21_600),
            ])
    }

    @Test("a [courier] retry-schedule is every subscriber's that has none, a subscriber's own wins, off turns it off")
    func retryScheduleDefault() throws {
        let configuration = try Self.parse(
            "[subscriber a]\nurl = http://h/a\n[subscriber b]\nurl = http://h/b\nretry-schedule = 10m\n"
                + "[subscriber c]\nurl = http://h/c\nretry-schedule = off\n"
                // The default may come after the sections that inherit it.
                + "[courier]\nretry-schedule = 1m 5m\n")
        #expect(configuration.defaultRetrySchedule == [.seconds(60), .seconds(300)])
        #expect(configuration.subscribers[0].retrySchedule == [.seconds(60), .seconds(300)])
        #expect(configuration.subscribers[1].retrySchedule == [.seconds(600)])
        #expect(configuration.subscribers[2].retrySchedule == nil)
        // off in [courier] is no default at all.
        let off = try Self.parse("[courier]\nretry-schedule = off\n[subscriber a]\nurl = http://h/a\n")
        #expect(off.defaultRetrySchedule == nil && off.subscribers[0].retrySchedule == nil)
        #expect(throws: ConfigError.self) {
            try Self.parse("[courier]\nretry-schedule = 0s\n[subscriber a]\nurl = http://h/a\n")
        }
    }

    @Test("breaker is 5 by default, [courier] sets it for all, and a subscriber's own wins")
    func breakerLimits() throws {
        let plain = try Self.parse("[subscriber a]\nurl = http://h/a\n")
        #expect(plain.breakerLimit(for: plain.subscribers[0]) == 5)
        let configuration = try Self.parse(
            "[courier]\nbreaker = 20\n[subscriber a]\nurl = http://h/a\n[subscriber b]\nurl = http://h/b\nbreaker = off\n"
                + "[subscriber c]\nurl = http://h/c\nbreaker = 3\n")
        #expect(configuration.subscribers.map { configuration.breakerLimit(for: $0) } == [20, nil, 3])
    }

    @Test("a catalog's cursor is its since; without one the server's time, unless its state already holds a version")
    func catalogCursors() throws {
        let configuration = try Self.parse(
            "[catalog a]\nurl = http://h/a\n[catalog b]\nurl = http://h/b\nsince = version\n"
                + "[catalog c]\nurl = http://h/c\nsince = server-time\n")
        #expect(configuration.catalogs.map(\.configuredCursor) == [nil, .version, .serverTime])
        #expect(
            configuration.catalogs.map { $0.cursor(resuming: CatalogState()) } == [.serverTime, .version, .serverTime])
        var synced = CatalogState()
        synced.since = .version(12)
        #expect(configuration.catalogs.map { $0.cursor(resuming: synced) } == [.version, .version, .serverTime])
        var timed = CatalogState()
        timed.since = .serverTime("2025-10-22T10:00:00Z")
        #expect(configuration.catalogs.map { $0.cursor(resuming: timed) } == [.serverTime, .version, .serverTime])
    }

    @Test func theShippedExampleIsValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let file = root.appendingPathComponent("etc/courier.conf").path
        let configuration = try Configuration.load(file: file, readingSecrets: false)
        #expect(configuration.spool == root.appendingPathComponent("spool").path)
    }

    /// Each bad line is refused with its line number and key.
    @Test(arguments: [
        (
            "[courier]\nspool = /s\ncolour = blue\n[subscriber a]\nurl = http://h/x\n",
            "courier.conf:3: [courier] colour: unknown key"
        ),
        (
            "[courier]\nsettle = 5\n[subscriber a]\nurl = http://h/x\n",
            "courier.conf:2: [courier] settle: `5` is not a duration"
        ),
        (
            "[courier]\nnotify = sometimes\n[subscriber a]\nurl = http://h/x\n",
            "courier.conf:2: [courier] notify: must be always"
        ),
        ("[subscriber a]\nurl = ftp://h/x\n", "courier.conf:2: [subscriber a] url: must be an http"),
        ("[subscriber a]\nurl = http://h/x\nconcurrency = 0\n", "courier.conf:3: [subscriber a] concurrency"),
        (
            "[subscriber a]\nurl = http://h/x\nheader = Idempotency-Key: x\n",
            "courier.conf:3: [subscriber a] header: Idempotency-Key is set by courier"
        ),
        (
            "[subscriber a]\nurl = http://h/x\nheader = novalue\n",
            "courier.conf:3: [subscriber a] header: must be `Name: value`"
        ),
        ("[subscriber a]\nkinds = sleep\n", "[subscriber a] has no url"),
        (
            "[subscriber a]\nurl = http://h/x\n[subscriber a]\nurl = http://h/y\n",
            "courier.conf:3: [subscriber a] appears twice"
        ),
        ("spool = /s\n[subscriber a]\nurl = http://h/x\n", "courier.conf:1: `spool` is outside any [section]"),
        ("[courier]\nspool = /s\n", "no [subscriber NAME] section"),
        ("[courier]\nthis is not ini\n[subscriber a]\nurl = http://h/x\n", "courier.conf:2: not `[section]`"),
        ("[queue x]\nurl = http://h/x\n", "courier.conf:2: unknown section [queue x]"),
        (
            "[catalog p]\nurl = http://h/c\nsince = yesterday\n",
            "courier.conf:3: [catalog p] since: must be version or server-time"
        ),
        ("[subscriber a.b]\nurl = http://h/x\n", "subscriber name `a.b`"),
        (
            "[courier]\nsettle = 5s\nsettle = 6s\n[subscriber a]\nurl = http://h/x\n",
            "courier.conf:3: [courier] settle: given twice"
        ),
        (
            "[subscriber a]\nurl = http://h/x\nretry-schedule = 1m 0s\n",
            "courier.conf:3: [subscriber a] retry-schedule: must be more than 0"
        ),
        (
            "[subscriber a]\nurl = http://h/x\nretry-schedule = " + String(repeating: "1m ", count: 21) + "\n",
            "courier.conf:3: [subscriber a] retry-schedule: give 1 to 20 durations"
        ),
        (
            "[subscriber a]\nurl = http://h/x\nretry-schedule = 5\n",
            "courier.conf:3: [subscriber a] retry-schedule: `5` is not a duration"
        ),
        (
            "[courier]\nbreaker = 0\n[subscriber a]\nurl = http://h/x\n",
            "courier.conf:2: [courier] breaker: must be a number from 1 to 1000, or off"
        ),
        (
            "[subscriber a]\nurl = http://h/x\nbreaker = never\n",
            "courier.conf:3: [subscriber a] breaker: must be a number from 1 to 1000, or off"
        ),
        (
            "[subscriber a]\nurl = http://h/" + String(repeating: "x", count: 300) + "\n",
            "courier.conf:2: line is too long"
        ),
    ])
    func badConfigsNameTheLine(text: String, expected: String) {
        do {
            let configuration = try Self.parse(text)
            Issue.record("accepted a bad config: \(configuration.subscribers.map(\.url))")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test func missingSecretFilesAreRefusedBeforeAnythingMoves() throws {
        let directory = TemporaryDirectory("config")
        try directory.write(
            "[subscriber a]\nurl = http://127.0.0.1:1/x\ntoken-file = missing.token\n", to: "courier.conf")
        #expect {
            try Configuration.load(file: directory.path + "/courier.conf", readingSecrets: true)
        } throws: { error in
            "\(error)".contains("courier.conf:3: token-file: unable to use \(directory.path)/missing.token")
        }
        try directory.write("s3cr3t-token\n", to: "missing.token")
        let configuration = try Configuration.load(file: directory.path + "/courier.conf", readingSecrets: true)
        #expect(configuration.subscribers[0].token == "s3cr3t-token")
    }
}
