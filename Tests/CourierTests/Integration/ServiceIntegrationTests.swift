import Foundation
import Glibc
import Testing

/// Logging for the journal, metrics for node_exporter, permission checks.
@Suite(.tags(.integration)) struct ServiceTests {
    static func setUp(status: Int, extra: String = "") throws -> (TemporaryDirectory, String, LoopbackServer) {
        let server = try LoopbackServer(status: status)
        let directory = TemporaryDirectory("service")
        try directory.write(
            "[courier]\nspool = spool\nsettle = 0s\n\(extra)\n[subscriber alpha]\nurl = \(server.url)\n",
            to: "courier.conf")
        let config = directory.path + "/courier.conf"
        _ = try CourierBinary.locate().run(["--config", config, "init"])
        try directory.write(#"{"id":"e-1","kind":"sleep"}"#, to: "spool/queued/e.json")
        return (directory, config, server)
    }

    /// Runs courier with standard error on a pipe; with `journal`, tells it
    /// (as systemd does) that the pipe is the journal.
    static func stderrOfRun(_ arguments: [String], journal: Bool) throws -> String {
        let binary = try CourierBinary.locate()
        let process = binary.start(arguments)
        let errors = Pipe()
        var info = stat()
        fstat(errors.fileHandleForWriting.fileDescriptor, &info)
        if journal {
            var environment = process.environment ?? [:]
            environment["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
            process.environment = environment
        }
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try errors.fileHandleForWriting.close()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func eventsCarryJournalPrioritiesWhenStderrIsTheJournal() throws {
        let (directory, config, server) = try Self.setUp(status: 500)
        defer { withExtendedLifetime((directory, server)) {} }
        let lines = try Self.stderrOfRun(["--config", config, "run"], journal: true).split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>accepted e-1@alpha") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("<4>needsAttention e-1@alpha status=500 attempt=1") }, "\(lines)")
    }

    @Test func plainOnATerminalOrPipeAndQuietMeansWarningsOnly() throws {
        let (directory, config, server) = try Self.setUp(status: 500)
        defer { withExtendedLifetime(server) {} }
        let plain = try Self.stderrOfRun(["--config", config, "run"], journal: false)
        #expect(plain.contains("courier: needsAttention e-1@alpha status=500"))
        #expect(!plain.contains("<"))
        #expect(!plain.contains("accepted"), "a person's terminal gets no line per routine event")
        try directory.write(#"{"id":"e-2","kind":"sleep"}"#, to: "spool/queued/e2.json")
        let verbose = try Self.stderrOfRun(["--config", config, "--verbose", "run"], journal: false)
        #expect(verbose.contains("courier: accepted e-2@alpha"))
        #expect(verbose.contains("started on"))
        try directory.write(#"{"id":"e-3","kind":"sleep"}"#, to: "spool/queued/e3.json")
        let quiet = try Self.stderrOfRun(["--config", config, "--quiet", "run"], journal: false)
        #expect(quiet.split(separator: "\n").allSatisfy { $0.contains("needsAttention") })
    }

    @Test func theMetricsFileIsReplacedAfterEachRound() throws {
        let metrics = TemporaryDirectory("metrics")
        let path = metrics.path + "/courier.prom"
        let (directory, config, server) = try Self.setUp(status: 201, extra: "metrics-file = \(path)")
        defer { withExtendedLifetime((directory, server)) {} }
        #expect(try CourierBinary.locate().run(["--config", config, "run"]).status == 0)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("# TYPE courier_items gauge\n"))
        #expect(text.contains(#"courier_items{state="sent",subscriber="alpha"} 1"#))
        #expect(text.contains(#"courier_items{state="queued",subscriber="alpha"} 0"#))
        #expect(text.contains("# TYPE courier_events_total counter\n"))
        #expect(text.contains(#"courier_events_total{subscriber="alpha",event="sent"} 1"#))
        #expect(text.contains(#"courier_build_info{version="0.1.0"} 1"#))
        #expect(text.contains(#"courier_oldest_item_age_seconds{state="queued",subscriber="alpha"} 0"#))
        #expect(text.contains("courier_last_round_exit_status 0\n"))
        #expect(text.contains(#"courier_last_round_items{outcome="sent"} 1"#))
        // Every sample line is NAME{labels} VALUE, as the textfile collector wants.
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            #expect(line.split(separator: " ").count == 2 && Double(line.split(separator: " ")[1]) != nil, "\(line)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: metrics.path) == ["courier.prom"])
    }

    /// Prometheus conventions: a counter only grows (across runs, and after
    /// prune removed the days it was counted from), every command that
    /// moves items rewrites the file, and promtool accepts it.
    @Test("events_total only grows, ack rewrites the file, and promtool check metrics accepts it", .needs("promtool"))
    func metricsFollowPrometheusConventions() throws {
        let metrics = TemporaryDirectory("metrics")
        let path = metrics.path + "/courier.prom"
        let (directory, config, server) = try Self.setUp(status: 500, extra: "metrics-file = \(path)")
        defer { withExtendedLifetime((directory, server)) {} }
        let binary = try CourierBinary.locate()
        _ = try binary.run(["--config", config, "run"])
        var text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(#"courier_items{state="needsAttention",subscriber="alpha"} 1"#))
        #expect(text.contains(#"courier_events_total{subscriber="alpha",event="needsAttention"} 1"#))

        // A person settles it: the file follows without a round.
        let ack = try binary.run(["--config", config, "ack", "e-1@alpha"])
        #expect(ack.status == 0, "\(ack.error)")
        text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            text.contains(#"courier_items{state="needsAttention",subscriber="alpha"} 0"#)
                && text.contains(#"courier_items{state="failed",subscriber="alpha"} 1"#))
        #expect(text.contains(#"courier_events_total{subscriber="alpha",event="acknowledged"} 1"#))
        #expect(text.contains("courier_last_round_exit_status 0\n"), "the last round's figures stay")

        // The day files go (as prune would take them); the counts stay.
        for day in try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/ledger") {
            try FileManager.default.removeItem(atPath: directory.path + "/spool/ledger/" + day)
        }
        try directory.write(#"{"id":"e-2","kind":"sleep"}"#, to: "spool/queued/e2.json")
        _ = try binary.run(["--config", config, "run"])
        text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(#"courier_events_total{subscriber="alpha",event="needsAttention"} 2"#), "\(text)")
        #expect(text.contains(#"courier_events_total{subscriber="alpha",event="acknowledged"} 1"#))

        // A hold shows at once, without a round.
        #expect(try binary.run(["--config", config, "hold", "alpha"]).status == 0)
        text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(#"courier_subscriber_held{subscriber="alpha"} 1"#), "\(text)")
        #expect(try binary.run(["--config", config, "release", "alpha"]).status == 0)
        text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(#"courier_subscriber_held{subscriber="alpha"} 0"#), "\(text)")

        let check = try Shell.run(["sh", "-c", "promtool check metrics < \"$0\"", path])
        #expect(check.status == 0, "\(check.output)")
    }

    @Test func checkWarnsAboutSecretsOthersCanRead() throws {
        let directory = TemporaryDirectory("check")
        try directory.write("sekrit\n", to: "alpha.token")
        chmod(directory.path + "/alpha.token", 0o644)
        try directory.write(
            "[courier]\nspool = spool\n[subscriber alpha]\nurl = http://127.0.0.1:1/\ntoken-file = alpha.token\n",
            to: "courier.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/courier.conf"
        _ = try binary.run(["--config", config, "init"])
        var check = try binary.run(["--config", config, "check"])
        #expect(check.status == 0)
        #expect(
            check.output.contains(
                "warning: [subscriber alpha] token-file \(directory.path)/alpha.token is readable by others (mode 0644)"
            ))
        chmod(directory.path + "/alpha.token", 0o640)
        check = try binary.run(["--config", config, "check"])
        #expect(!check.output.contains("warning"))
        chmod(directory.path + "/spool", 0o777)
        check = try binary.run(["--config", config, "check"])
        #expect(check.status == 74)
        #expect(check.output.contains("is writable by everyone"))
    }

    @Test("check warns about a notify-command that cannot run, and one that failed after the last round")
    func checkWarnsAboutABrokenNotifier() throws {
        let (directory, config, server) = try Self.setUp(
            status: 500, extra: "notify = always\nnotify-command = notify.sh")
        defer { withExtendedLifetime((directory, server)) {} }
        let binary = try CourierBinary.locate()
        var check = try binary.run(["--config", config, "check"])
        #expect(check.status == 0)
        #expect(
            check.output.contains("warning: notify-command \(directory.path)/notify.sh cannot be run"),
            "\(check.output)")

        try directory.write("#!/bin/sh\necho 'mail server down' >&2\nexit 3\n", to: "notify.sh")
        chmod(directory.path + "/notify.sh", 0o755)
        check = try binary.run(["--config", config, "check"])
        #expect(!check.output.contains("warning"), "\(check.output)")
        _ = try binary.run(["--config", config, "run"])
        check = try binary.run(["--config", config, "check"])
        #expect(check.status == 0)
        #expect(check.output.contains("warning: the notifier failed after round"), "\(check.output)")
        #expect(check.output.contains("mail server down"), "\(check.output)")
        let json = try binary.run(["--config", config, "check", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["ok"] as? Bool == true && object["subscribers"] as? [String] == ["alpha"])
        let findings = try #require(object["findings"] as? [[String: String]])
        #expect(
            findings.contains { $0["severity"] == "warning" && $0["message"]?.contains("mail server down") == true })
    }
}
