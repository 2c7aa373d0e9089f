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

/// Recovery, the round lock, and the moves people make.
@Suite(.tags(.integration)) struct RoundTests {
    static func spool(server: LoopbackServer) throws -> TemporarySpool {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        spool.companions.append(server)
        return spool
    }

    @Test func whatWasSendingWhenARoundDiedIsSentAgainWithTheSameKey() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server: server)
        let body = #"{"id":"in-flight","kind":"sleep"}"#
        try spool.spool.deliverNewFile(Array(body.utf8), named: FileName("in-flight@alpha.json"), into: .sending)
        let summary = try spool.runRound()
        #expect(summary.recovered == 1)
        #expect(try spool.names(in: .sent) == ["in-flight@alpha.json"])
        #expect(try spool.names(in: .sending).isEmpty)
        #expect(server.requests.first?.header("idempotency-key") == "in-flight")
        #expect(try spool.ledger().map(\.event) == [.recovered, .sent])
    }

    @Test func aSecondRoundFindsTheLockAndLeaves() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server: server)
        try spool.dropRecord(id: "r")
        let held = try #require(try spool.spool.lockRound(wait: false))
        let result = try Round(session: spool.session, configuration: spool.configuration, mode: .background).run(
            wait: false)
        guard case .busy = result else {
            Issue.record("a round ran while another held the lock")
            return
        }
        #expect(try spool.names(in: .queued).count == 1)
        withExtendedLifetime(held) {}
    }

    @Test func concurrentRoundsDeliverEachItemOnce() async throws {
        let server = try LoopbackServer { _, _ in
            usleep(2_000)
            return .respond(.json(201, "{}"))
        }
        let spool = try Self.spool(server: server)
        for index in 0..<60 { try spool.dropRecord(id: "c-\(index)") }
        let path = spool.path
        let configuration = spool.configuration
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    // Each round opens the spool itself, as separate processes would.
                    let own = try SpoolSession(path: path, worker: nil)
                    _ = try Round(session: own, configuration: configuration, mode: .background).run(wait: true)
                }
            }
            try await group.waitForAll()
        }
        #expect(try spool.names(in: .sent).count == 60)
        #expect(server.countsByKey.values.allSatisfy { $0 == 1 })
        #expect(server.requests.count == 60)
    }

    @Test func ackAndResendMoveLikeMvAndLeaveATrace() throws {
        let server = try LoopbackServer { _, count in
            count == 1 ? .respond(.json(500, "{}")) : .respond(.json(201, "{}"))
        }
        let spool = try Self.spool(server: server)
        try spool.dropRecord(id: "a")
        try spool.dropRecord(id: "b")
        try spool.runRound()
        #expect(try spool.names(in: .needsAttention) == ["a@alpha.json", "b@alpha.json"])

        let moves = ManualMoves(session: spool.session)
        _ = try moves.acknowledge(try spool.spool.resolve("a@alpha"))
        #expect(try spool.names(in: .failed) == ["a@alpha.json"])
        _ = try moves.resend(try spool.spool.resolve("b"))
        #expect(try spool.names(in: .queued) == ["b@alpha.json"])
        // A person's `mv failed/X queued/` works the same as `resend`.
        #expect(rename(spool.path + "/failed/a@alpha.json", spool.path + "/queued/a@alpha.json") == 0)
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["a@alpha.json", "b@alpha.json"])
        let events = try spool.ledger().filter { $0.key == "b" }.map(\.event)
        #expect(events == [.accepted, .needsAttention, .resent, .sent])
        #expect(server.countsByKey == ["a": 2, "b": 2])
    }

    @Test func ackRefusesItemsThatDoNotNeedAttention() throws {
        let server = try LoopbackServer(status: 200)
        let spool = try Self.spool(server: server)
        try spool.dropRecord(id: "ok")
        try spool.runRound()
        let report = try ManualMoves(session: spool.session).acknowledge(try spool.spool.resolve("ok"))
        #expect(report.moved.isEmpty && report.refused.map(\.name) == ["ok@alpha.json"], "\(report.refused)")
        #expect(try spool.names(in: .sent) == ["ok@alpha.json"])
        #expect(throws: OperationError.self) { try spool.spool.resolve("nothing-here") }
    }

    @Test func entriesForRemovedSubscribersNeedAttention() throws {
        let server = try LoopbackServer(status: 200)
        let spool = try Self.spool(server: server)
        try spool.spool.deliverNewFile(
            Array(#"{"id":"x","kind":"sleep"}"#.utf8), named: FileName("x@gone.json"), into: .queued)
        try spool.runRound()
        #expect(try spool.names(in: .needsAttention) == ["x@gone.json"])
        #expect(try spool.ledger().last?.detail == "subscriber gone is not configured")
    }

    /// A configuration may have catalogs and no subscriber at all; a round
    /// then still ends, setting aside what queued/ holds.
    @Test("a round with no subscriber configured ends and sets aside the entries it finds")
    func aRoundWithoutSubscribersEnds() throws {
        let spool = try TemporarySpool(subscribers: [])
        try spool.spool.deliverNewFile(
            Array(#"{"id":"x","kind":"sleep"}"#.utf8), named: FileName("x@gone.json"), into: .queued)
        try spool.runRound()
        #expect(try spool.names(in: .needsAttention) == ["x@gone.json"])
    }

    @Test func theLastRoundIsKeptForStatus() throws {
        let server = try LoopbackServer(status: 200)
        let spool = try Self.spool(server: server)
        try spool.dropRecord(id: "one")
        let summary = try spool.runRound()
        let kept = try #require(Round.lastSummary(in: spool.spool))
        #expect(kept.round == summary.round)
        #expect(kept.sent == 1)
        #expect(try spool.spool.counts()[.sent] == 1)
    }
}
