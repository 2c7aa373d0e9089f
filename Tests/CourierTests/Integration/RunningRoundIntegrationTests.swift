import Foundation
import Glibc
import Testing

@testable import CourierCLI
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport

/// A running round is visible (issue 22): `.courier/round-running.json`
/// while it runs a second or more, gone after; a file a killed round left
/// is seen as such, and removed by the next round.
@Suite(.tags(.integration)) struct RunningRoundTests {
    /// A spool whose one subscriber answers 201 after `microseconds`, one
    /// request at a time; the server lives as long as the spool.
    static func slowSubscriber(microseconds: useconds_t) throws -> TemporarySpool {
        let server = try LoopbackServer { _, _ in
            usleep(microseconds)
            return .respond(HTTPResponse(status: 201, headers: [], body: Array("{}".utf8)))
        }
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url, concurrency: 1)
        ])
        spool.companions.append(server)
        return spool
    }

    /// A subscriber that takes 300 ms per request, one at a time: eight
    /// entries keep a round busy well past its first second, however
    /// loaded the machine (a slower machine only makes the round longer).
    static func slowSpool(entries: Int = 8) throws -> TemporarySpool {
        let spool = try slowSubscriber(microseconds: 300_000)
        for index in 0..<entries {
            try spool.drop(#"{"id":"s\#(index)","kind":"sleep"}"#, as: "s\(index)@alpha.json")
        }
        return spool
    }

    @Test("a round a second old writes its progress for status, updates it, and removes it at the end")
    func theRunningRoundIsSeen() throws {
        let spool = try Self.slowSpool()
        let seen = Locked<[RoundProgress.Sighting]>([])
        var round = Round(session: spool.session, configuration: spool.configuration, mode: .foreground)
        round.progress = { [spool = spool.spool] _ in
            seen.withLock { $0 += RoundProgress.running(in: spool) }
        }
        guard case .ran(let summary) = try round.run(wait: true) else {
            Issue.record("the spool was busy")
            return
        }
        let sightings = seen.withLock { $0 }
        let last = try #require(sightings.last, "status never saw the round")
        #expect(last.alive && last.progress.round == summary.round && last.progress.pid == getpid())
        #expect(last.progress.mode == .foreground && last.progress.worker == nil)
        let left = try #require(last.progress.left)
        #expect(left > 0 && left < 8 && last.progress.sent > 0, "\(last.progress)")
        #expect(RoundProgress.running(in: spool.spool).isEmpty, "the file goes with the round")
        #expect(!FileManager.default.fileExists(atPath: spool.path + "/.courier/round-running.json"))
    }

    @Test("a round's ~left counts the dropped files intake took straight into sending/ and has not sent yet")
    func leftCountsWhatIntakeTookIntoSending() throws {
        let spool = try Self.slowSubscriber(microseconds: 200_000)
        // Dropped files, not entries: one group takes all 20 into sending/
        // at once, and a request at a time sends them over 4 s or more,
        // well past the count a second in.
        let records = 20
        for index in 0..<records { try spool.dropRecord(id: "d\(index)") }
        let seen = Locked<[RoundProgress]>([])
        var round = Round(session: spool.session, configuration: spool.configuration, mode: .foreground)
        round.progress = { progress in seen.withLock { $0.append(progress) } }
        guard case .ran(let summary) = try round.run(wait: true) else {
            Issue.record("the spool was busy")
            return
        }
        #expect(summary.sent == records, "\(summary)")
        let counted = seen.withLock { $0 }.filter { $0.left != nil }
        #expect(!counted.isEmpty, "the round never counted what was left")
        for progress in counted {
            let left = try #require(progress.left)
            #expect(left + progress.sent == records, "sent \(progress.sent), ~\(left) left of \(records)")
        }
    }

    @Test("a round that counts queued/ for status still reads every entry of it: the count has a handle of its own")
    func countingTheQueueLosesNoEntry() throws {
        let spool = try Self.slowSubscriber(microseconds: 40_000)
        // 60 × 40 ms: the count, a second in, comes while most are still
        // to be read from the folder, however slow the machine.
        for index in 0..<60 {
            try spool.drop(#"{"id":"c\#(index)","kind":"sleep"}"#, as: "c\(index)@alpha.json")
        }
        var round = Round(session: spool.session, configuration: spool.configuration, mode: .background)
        round.progress = { _ in }
        guard case .ran(let summary) = try round.run(wait: true) else {
            Issue.record("the spool was busy")
            return
        }
        #expect(summary.sent == 60, "\(summary)")
        #expect(try spool.names(in: .queued).isEmpty)
    }

    @Test("a round that ends within its first second writes nothing")
    func aShortRoundWritesNothing() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try RoundTests.spool(server: server)
        try spool.dropRecord(id: "quick")
        var round = Round(session: spool.session, configuration: spool.configuration, mode: .background)
        // An observer, as on a terminal: it is drawn to, the file still waits.
        round.progress = { _ in }
        _ = try round.run(wait: true)
        #expect(try spool.ledger().contains { $0.event == .sent })
        let names = try spool.spool.control.sortedNames().map(\.description)
        #expect(!names.contains { $0.hasPrefix("round-running") }, "\(names)")
    }

    @Test("the file a killed round left is seen as gone, and the next round removes it")
    func aDeadRoundsFileIsStale() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try RoundTests.spool(server: server)
        // A process that has exited: its pid is free (for a while).
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let dead = RoundProgress(
            round: RoundID(value: "20261130T070000Z-dead"), mode: .background, worker: nil,
            host: RoundProgress.hostName(), pid: child.processIdentifier, started: "2026-11-30T07:00:00.000Z",
            updated: "2026-11-30T07:00:05.000Z", sent: 3)
        let encoded = try JSONEncoder().encode(dead)
        try encoded.write(to: URL(fileURLWithPath: spool.path + "/.courier/round-running.json"))
        let sighting = try #require(RoundProgress.running(in: spool.spool).first)
        #expect(!sighting.alive && sighting.progress.sent == 3)
        #expect(StatusCommand.describe(sighting).contains("is gone"), "\(StatusCommand.describe(sighting))")
        try spool.runRound()
        #expect(RoundProgress.running(in: spool.spool).isEmpty)
    }

    @Test("the progress line says sent, attention, left and the next retry; the summary keeps one word per thing")
    func theWords() {
        var progress = RoundProgress(
            round: RoundID(value: "r"), mode: .foreground, worker: nil, host: "h", pid: 1, started: "", updated: "")
        progress.sent = 120
        progress.needsAttention = 3
        progress.left = 865
        progress.retrying = 12
        progress.nextRetrySeconds = 8
        #expect(
            ProgressLine.text(progress)
                == "courier: 120 sent, 3 need attention, ~865 left, next retry of 12 in 8 s")
        #expect(!ProgressLine.wanted(journal: true, quiet: false))
        var summary = RoundSummary(round: RoundID(value: "r"), mode: .background, started: .now())
        summary.deferred = 2
        summary.notDue = 5
        let tally = RunCommand.tally(summary)
        #expect(tally.contains("2 deferred") && tally.contains("5 not due yet"), "\(tally)")
        #expect(tally.components(separatedBy: "deferred").count == 2, "deferred names one thing: \(tally)")
    }
}
