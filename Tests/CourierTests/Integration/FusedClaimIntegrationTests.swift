import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierTransport

/// Intake and claim in one step: a dropped record the round sends goes
/// from its dropped name straight to `sending/`, with the bytes intake
/// checked; records the round does not send stay in `queued/`, counted once.
@Suite(.tags(.integration)) struct FusedClaimTests {
    /// Renames a round makes for `count` dropped records to one subscriber.
    static func renames(forDropped count: Int, server: LoopbackServer) throws -> Int {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        for index in 0..<count { try spool.dropRecord(id: "r-\(index)") }
        let plan = FaultPlan()
        spool.session.faults = plan
        try spool.runRound()
        #expect(try spool.names(in: .sent).count == count)
        return plan.counts[.rename] ?? 0
    }

    @Test("a dropped record the round sends takes two renames: its dropped name to sending/, then to sent/")
    func twoRenamesPerRecord() throws {
        let server = try LoopbackServer(status: 201)
        let few = try Self.renames(forDropped: 4, server: server)
        let more = try Self.renames(forDropped: 12, server: server)
        #expect(more - few == 2 * 8, "\(few) renames for 4 records, \(more) for 12")
    }

    @Test("the ledger says accepted, then sent, and the body sent is the body dropped")
    func acceptedThenSent() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        try spool.dropRecord(id: "one", extra: #","data":{"n":1}"#)
        try spool.runRound()
        #expect(try spool.ledger().map(\.event) == [.accepted, .sent])
        #expect(
            server.requests.map { String(decoding: $0.body, as: UTF8.self) } == [
                #"{"id":"one","kind":"sleep","data":{"n":1}}"#
            ])
        #expect(try spool.names(in: .sent) == ["one@alpha.json"])
    }

    @Test(
        "a dropped file written to after intake read it is sent as read, and waits under its dropped name as another drop"
    )
    func aFileChangedAfterItsReadIsSentAsRead() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let read = #"{"id":"w","kind":"sleep","n":1}"#
        let written = #"{"id":"w","kind":"sleep","n":2}"#
        try spool.drop(read, as: "w.json")
        let session = IntakeSession(
            intake: Intake(
                session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())))
        try session.offer(FileName("w.json"), kind: nil)
        // The script writes again, in place, after intake's read.
        try written.write(toFile: spool.path + "/queued/w.json", atomically: false, encoding: .utf8)
        _ = try spool.spool.directory(.queued).setModified(FileName("w.json"), to: .now() + .seconds(2))
        let claimed = try session.commit(sendNow: { _ in true })
        // What the ledger accepted is what is sent, and what sent/ will keep.
        #expect(claimed.map { String(decoding: $0.body, as: UTF8.self) } == [read])
        #expect(try String(contentsOfFile: spool.path + "/sending/w@alpha.json", encoding: .utf8) == read)
        #expect(try spool.names(in: .queued) == ["w.json"])
        #expect(try String(contentsOfFile: spool.path + "/queued/w.json", encoding: .utf8) == written)
    }

    @Test("records dropped for a held subscriber stay in queued/ and are counted once; the others are sent")
    func heldSubscribersKeepTheirNewEntries() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url), TemporarySpool.subscriber("beta", url: server.url),
        ])
        let held = try #require(try spool.spool.heldFolder())
        try spool.spool.deliverNewFile([], named: FileName("alpha"), into: held)
        let ids = (0..<300).map { "h-\($0)" }
        for id in ids { try spool.dropRecord(id: id) }
        let summary = try spool.runRound()
        #expect(summary.held == ["alpha": 300])
        #expect(try spool.names(in: .queued).count == 300)
        #expect(try spool.names(in: .queued).allSatisfy { $0.hasSuffix("@alpha.json") })
        #expect(try spool.names(in: .sent).count == 300)
        #expect(try spool.names(in: .sending).isEmpty)
    }

    @Test("records taken straight into sending/ for a subscriber the breaker stops go back to queued/")
    func theBreakerPutsClaimedRecordsBack() throws {
        let alpha = try TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: 1)
        let spool = try TemporarySpool(subscribers: [alpha])
        for index in 0..<20 { try spool.dropRecord(id: "d-\(index)") }
        let summary = try spool.runRound()
        #expect(try spool.names(in: .sending).isEmpty)
        #expect(try spool.names(in: .needsAttention).count == 5)
        #expect(try spool.names(in: .queued).count == 15)
        #expect(summary.notAnswering == ["alpha": 15])
        let back = try spool.ledger().filter { $0.event == .recovered }
        #expect(back.count == 15 && back.allSatisfy { $0.detail.hasSuffix("not answering; back to queued/") })
    }
}
