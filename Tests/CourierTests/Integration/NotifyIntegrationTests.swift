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

/// docs/design.md §7: notifications after background rounds, and honesty about a
/// notifier that does not work.
@Suite(.tags(.integration)) struct NotifyTests {
    /// A notifier script that saves its standard input into `out`.
    static func recorder(in directory: TemporaryDirectory, exitStatus: Int = 0) throws -> (command: String, out: String)
    {
        let out = directory.path + "/notified.json"
        let command = directory.path + "/notify.sh"
        try directory.write("#!/bin/sh\ncat > \(out)\necho 'it broke' >&2\nexit \(exitStatus)\n", to: "notify.sh")
        chmod(command, 0o755)
        return (command, out)
    }

    static func spool(status: Int, mode: NotifyMode, command: String?) throws -> TemporarySpool {
        let server = try LoopbackServer(status: status)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        spool.companions.append(server)
        spool.configuration.notify = mode
        spool.configuration.notifyCommand = command
        return spool
    }

    @Test("a notifier that prints a subscriber's token on stderr has it redacted in .courier/notifier.json")
    func aNotifiersWordsAreRedacted() throws {
        let directory = TemporaryDirectory("notify")
        let token = "tok-5e4d3c2b1a09f8e7"
        try directory.write("#!/bin/sh\necho 'bad auth \(token)' >&2\nexit 1\n", to: "leaky.sh")
        chmod(directory.path + "/leaky.sh", 0o755)
        let server = try LoopbackServer(status: 500)
        let spool = try TemporarySpool(
            subscribers: [TemporarySpool.subscriber("alpha", url: server.url, token: token)])
        spool.companions.append(server)
        spool.configuration.notify = .always
        spool.configuration.notifyCommand = directory.path + "/leaky.sh"
        try spool.dropRecord(id: "n-1")
        try spool.runRound()
        let health = try #require(Notifier.health(in: spool.spool))
        #expect(!health.working)
        #expect(!health.detail.contains(token) && health.detail.contains("bad auth [redacted]"), "\(health.detail)")
    }

    @Test func alwaysSendsTheSummaryAfterABackgroundRoundThatMovedSomething() throws {
        let directory = TemporaryDirectory("notify")
        let (command, out) = try Self.recorder(in: directory)
        let spool = try Self.spool(status: 500, mode: .always, command: command)
        try spool.runRound()
        #expect(!FileManager.default.fileExists(atPath: out), "an empty round is not worth a notification")
        try spool.dropRecord(id: "n-1")
        let summary = try spool.runRound()
        let data = try #require(FileManager.default.contents(atPath: out))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["round"] as? String == summary.round.value)
        #expect(object["mode"] as? String == "background")
        #expect(object["needsAttention"] as? Int == 1)
        #expect(object["attention"] as? [String] == ["n-1@alpha"])
        #expect((object["subscribers"] as? [String: [String: Int]])?["alpha"]?["needsAttention"] == 1)
        #expect(Notifier.health(in: spool.spool)?.working == true)
    }

    @Test func failuresOnlyWhenSomethingNeedsAttention() throws {
        let directory = TemporaryDirectory("notify")
        let (command, out) = try Self.recorder(in: directory)
        let spool = try Self.spool(status: 201, mode: .failures, command: command)
        try spool.dropRecord(id: "fine")
        try spool.runRound()
        #expect(!FileManager.default.fileExists(atPath: out))
        try spool.drop("{broken", as: "broken.json")
        try spool.runRound()
        #expect(FileManager.default.fileExists(atPath: out))
    }

    @Test func offAndForegroundRoundsStayQuiet() throws {
        let directory = TemporaryDirectory("notify")
        let (command, out) = try Self.recorder(in: directory)
        let spool = try Self.spool(status: 500, mode: .off, command: command)
        try spool.dropRecord(id: "a")
        try spool.runRound()
        spool.configuration.notify = .always
        try spool.dropRecord(id: "b")
        try spool.runRound(.foreground)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test(arguments: ["missing", "not executable", "failing"])
    func aBrokenNotifierIsRecordedAsItIs(kind: String) throws {
        let directory = TemporaryDirectory("notify")
        var command = directory.path + "/nothing-here"
        var expected = "does not exist"
        if kind == "not executable" {
            try directory.write("#!/bin/sh\nexit 0\n", to: "plain.sh")
            command = directory.path + "/plain.sh"
            expected = "is not an executable file"
        } else if kind == "failing" {
            command = try Self.recorder(in: directory, exitStatus: 3).command
            expected = "exited with status 3: it broke"
        }
        let spool = try Self.spool(status: 201, mode: .always, command: command)
        try spool.dropRecord(id: "x")
        let summary = try spool.runRound()
        #expect(summary.sent == 1, "a broken notifier never stops delivery")
        let health = try #require(Notifier.health(in: spool.spool))
        #expect(!health.working)
        #expect(health.detail.contains(expected), "\(health.detail)")
        #expect(health.round == summary.round.value)
    }
}

/// A notifier is a guest in the round: it cannot hold the round, or the
/// spool lock, longer than its time allows.
@Suite(.tags(.integration)) struct NotifierDeadlineTests {
    @Test("a notifier that ignores SIGTERM is killed with its whole process group after a grace period")
    func aStubbornNotifierAndItsChildrenAreKilled() throws {
        let directory = TemporaryDirectory("notify")
        let childPID = directory.path + "/child.pid"
        try directory.write(
            "#!/bin/sh\ntrap '' TERM\nsleep 60 &\necho $! > \(childPID)\nwait\n", to: "stubborn.sh")
        chmod(directory.path + "/stubborn.sh", 0o755)
        let spool = try NotifyTests.spool(status: 500, mode: .always, command: directory.path + "/stubborn.sh")
        spool.configuration.notifyTimeout = .milliseconds(300)
        try spool.dropRecord(id: "n-1")
        let started = MonotonicInstant.now()
        try spool.runRound()
        let took = MonotonicInstant.now() - started
        #expect(took < .seconds(5), "the notifier held the round for \(took)")
        let health = Notifier.health(in: spool.spool)
        #expect(health?.working == false)
        #expect(health?.detail.contains("did not finish") == true, "\(health?.detail ?? "")")
        let pidText = try String(contentsOfFile: childPID, encoding: .utf8)
        let pid = try #require(pid_t(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))
        // Killed (and reaped by init) or at worst a zombie: never still sleeping.
        var state = "gone"
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        {
            state = String(stat[stat.index(close, offsetBy: 2)])
        }
        #expect(state == "gone" || state == "Z", "the notifier's child is still \(state)")
    }
}
