import Foundation
import Glibc
import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierSpool

/// `courier log` as a person uses it: journalctl's times, -n, --key,
/// subscriber names checked, and --follow.
@Suite(.serialized, .tags(.integration)) struct LogCommandTests {
    /// A configuration with subscribers alpha and beta and catalog products,
    /// and its spool, initialised by the binary.
    static func setUp() throws -> (TemporaryDirectory, CourierBinary, String, Ledger) {
        let directory = TemporaryDirectory("log")
        try directory.write(
            """
            [courier]
            spool = spool
            [subscriber alpha]
            url = http://127.0.0.1:1/
            [subscriber beta]
            url = http://127.0.0.1:1/
            [catalog products]
            url = http://127.0.0.1:1/catalogs/products
            """, to: "courier.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/courier.conf"
        let initialised = try binary.run(["--config", config, "init"])
        #expect(initialised.status == 0, "\(initialised.error)")
        let ledger = try Ledger(directory: DirectoryHandle.open(path: directory.path + "/spool/ledger"))
        return (directory, binary, config, ledger)
    }

    static func line(_ key: String, at time: Timestamp, subscriber: String = "alpha") -> LedgerLine {
        LedgerLine(time: time, round: "r", subscriber: subscriber, key: key, event: .sent, status: 201)
    }

    /// The keys of `log`'s lines (column 4).
    static func keys(_ result: CourierBinary.Result) -> [String] {
        result.output.split(separator: "\n").map { String($0.split(separator: "\t")[3]) }
    }

    @Test("log reads today by default, and journalctl's times: -1h, yesterday, today, @EPOCH; -n and --key")
    func timesAndCounts() throws {
        let (directory, binary, config, ledger) = try Self.setUp()
        defer { withExtendedLifetime(directory) {} }
        let now = Timestamp.now()
        let today = now.utcDayStart
        let lines = [
            Self.line("yesterday-noon", at: today - .seconds(12 * 3600)),
            Self.line("two-hours-ago", at: now - .seconds(7200)),
            Self.line("ten-minutes-ago", at: now - .seconds(600)),
            Self.line("ten-minutes-ago", at: now - .seconds(599), subscriber: "beta"),
            Self.line("just-now", at: now - .seconds(1)),
        ]
        try ledger.append(lines)
        func keys(_ arguments: [String]) throws -> [String] {
            let result = try binary.run(["--config", config, "log"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.error)")
            return Self.keys(result)
        }
        // Near midnight, two hours ago is yesterday: expect what the times say.
        func between(_ start: Timestamp, _ end: Timestamp) -> [String] {
            lines.filter { $0.time >= start && $0.time < end }.map(\.key)
        }
        #expect(try keys([]) == between(today, now + .seconds(86_400)))
        #expect(try keys(["--since", "-1h"]) == ["ten-minutes-ago", "ten-minutes-ago", "just-now"])
        #expect(try keys(["--since", "yesterday", "--until", "today"]) == between(today - .seconds(86_400), today))
        #expect(try keys(["--since=-1h", "-n", "1"]) == ["just-now"])
        #expect(
            try keys(["--lines", "2", "--since", "@\(now.secondsSinceEpoch - 3600)"]) == [
                "ten-minutes-ago", "just-now",
            ])
        #expect(try keys(["--key", "yesterday-noon"]) == ["yesterday-noon"])
        #expect(try keys(["--key", "ten-minutes-ago", "--subscriber", "beta"]) == ["ten-minutes-ago"])
        let json = try binary.run(["--config", config, "log", "--json", "--since", "-1h", "-n", "2"])
        let objects = json.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.map { $0["key"] as? String } == ["ten-minutes-ago", "just-now"], "\(json.output)")
    }

    @Test("a time, a count or a combination log cannot take is a usage error naming the option and the value")
    func badValuesAreUsageErrors() throws {
        let (directory, binary, config, _) = try Self.setUp()
        defer { withExtendedLifetime(directory) {} }
        for (arguments, message) in [
            (["--since", "yesterdy"], "--since yesterdy: not a time; give today, yesterday"),
            (["--until", "2026-13-01"], "--until 2026-13-01: not a time"),
            (["-n", "ten"], "--lines ten: not a number of lines"),
            (["-f", "--until", "now"], "--follow shows lines yet to be written: it takes no --until"),
        ] {
            let result = try binary.run(["--config", config, "log"] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.error.contains(message), "\(arguments): \(result.error)")
            #expect(result.error.contains("(see `courier log --help`)"), "\(arguments): \(result.error)")
        }
    }

    @Test("an unknown --subscriber exits 64 naming it and the configured ones; a removed one's history is shown")
    func subscribersAreChecked() throws {
        let (directory, binary, config, ledger) = try Self.setUp()
        defer { withExtendedLifetime(directory) {} }
        try ledger.append([
            Self.line("old-1", at: .now(), subscriber: "retired"), Self.line("i-1", at: .now(), subscriber: "-"),
        ])
        let typo = try binary.run(["--config", config, "log", "--subscriber", "alhpa"])
        #expect(typo.status == 64)
        #expect(
            typo.error.contains(
                "--subscriber alhpa: no such subscriber, in the configuration or the ledger "
                    + "(configured: alpha, beta; catalogs: products)"), "\(typo.error)")
        let retired = try binary.run(["--config", config, "log", "--subscriber", "retired"])
        #expect(retired.status == 0, "\(retired.error)")
        #expect(Self.keys(retired) == ["old-1"])
        #expect(retired.error.contains("warning: retired is not in the configuration; showing its ledger lines"))
        for name in ["alpha", "products", "-"] {
            let known = try binary.run(["--config", config, "log", "--subscriber", name])
            #expect(known.status == 0 && known.error.isEmpty, "\(name): \(known.error)")
        }
    }

    @Test("log --follow prints the last lines, then each new one, into tomorrow's day file, until terminated")
    func following() throws {
        let (directory, binary, config, ledger) = try Self.setUp()
        let now = Timestamp.now()
        try ledger.append((1...12).map { Self.line("before-\($0)", at: now - .milliseconds(60 - $0)) })
        let outputPath = directory.path + "/follow.out"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil) else {
            throw TestFailure("cannot create \(outputPath)")
        }
        let process = binary.start(["--config", config, "log", "-f", "--subscriber", "alpha"])
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        _ = try awaitLine(containing: "before-12", in: outputPath)
        // Another writer, as a round is: today's file, then a new day's.
        try Ledger(directory: DirectoryHandle.open(path: directory.path + "/spool/ledger")).append([
            Self.line("later", at: .now()), Self.line("not-alpha", at: .now(), subscriber: "beta"),
        ])
        _ = try awaitLine(containing: "later", in: outputPath)
        try ledger.append(Self.line("tomorrow", at: now.utcDayStart + .seconds(86_400 + 60)))
        _ = try awaitLine(containing: "tomorrow", in: outputPath)
        // The test runner's threads block SIGTERM, and a child inherits
        // that: log unblocks it, as a follow must end by it.
        process.terminate()
        let deadline = MonotonicInstant.now() + .seconds(10)
        while process.isRunning && MonotonicInstant.now() < deadline { usleep(10_000) }
        try #require(!process.isRunning, "log -f goes on after SIGTERM")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
        let keys = try String(contentsOfFile: outputPath, encoding: .utf8).split(separator: "\n").map {
            String($0.split(separator: "\t")[3])
        }
        // journalctl -f: the last 10 lines first.
        #expect(keys == (3...12).map { "before-\($0)" } + ["later", "tomorrow"])
    }

    @Test("log, log -n and prune take two workers' files as one ledger: lines in time order, every old file named")
    func sharedLedger() throws {
        let (directory, binary, config, plain) = try Self.setUp()
        defer { withExtendedLifetime(directory) {} }
        let ledgerDirectory = try DirectoryHandle.open(path: directory.path + "/spool/ledger")
        let a = Ledger(directory: ledgerDirectory, worker: try WorkerID("a"))
        let b = Ledger(directory: ledgerDirectory, worker: try WorkerID("b"))
        let now = Timestamp.now()
        let old = now - .seconds(10 * 86_400)
        try a.append(Self.line("old-a", at: old))
        try b.append(Self.line("old-b", at: old))
        // By turns, each a little before the other's last: only a merge
        // by time puts them in order.
        try a.append(Self.line("second", at: now - .seconds(50)))
        try b.append(Self.line("first", at: now - .seconds(60)))
        try plain.append(Self.line("third", at: now - .seconds(40)))
        try b.append(Self.line("fourth", at: now - .seconds(30)))
        let log = try binary.run(["--config", config, "log", "--since", "-2m"])
        #expect(log.status == 0, "\(log.error)")
        #expect(Self.keys(log) == ["first", "second", "third", "fourth"])
        let last = try binary.run(["--config", config, "log", "--since", "-2m", "-n", "2"])
        #expect(Self.keys(last) == ["third", "fourth"])
        let prune = try binary.run(["--config", config, "prune", "--retention", "5d", "--dry-run"])
        #expect(prune.status == 0, "\(prune.error)")
        #expect(prune.output.contains("would remove ledger/\(old.utcDay).a.tsv\n"), "\(prune.output)")
        #expect(prune.output.contains("would remove ledger/\(old.utcDay).b.tsv\n"), "\(prune.output)")
        #expect(prune.output.contains("would remove 2 ledger files"), "\(prune.output)")
    }
}
