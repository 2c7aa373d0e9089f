import Foundation
import Glibc
import Testing

@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierSupport

/// The states a power cut left on btrfs (issue 20, as scripts/powerloss-test.sh
/// found them before the protocol synced folders sources first): one file
/// under the old and the new name of a rename. Each is built here with
/// link(2) and the ledger lines the cut left, and the next round (or a
/// person's resend) must deliver everything once, with nothing flagged.
@Suite(.tags(.integration)) struct HalfRenameTests {
    static func spool(_ server: LoopbackServer, _ names: [String] = ["alpha", "beta"]) throws -> TemporarySpool {
        try TemporarySpool(subscribers: names.map { try TemporarySpool.subscriber($0, url: server.url) })
    }

    static func record(_ id: String) -> [UInt8] { Array(#"{"id":"\#(id)","kind":"sleep"}"#.utf8) }

    /// A second name for `name` in `from`: `to`/`as` (link(2)).
    static func link(_ spool: TemporarySpool, _ name: String, in from: SpoolState, to: SpoolState, as other: String)
        throws
    {
        let result = Glibc.link(spool.path + "/\(from.rawValue)/\(name)", spool.path + "/\(to.rawValue)/\(other)")
        guard result == 0 else { throw TestFailure("link: \(String(cString: strerror(errno)))") }
    }

    static func line(_ key: String, _ subscriber: String, _ event: LedgerEvent, _ detail: String = "") -> LedgerLine {
        LedgerLine(time: .now(), round: "cut", subscriber: subscriber, key: key, event: event, detail: detail)
    }

    static func write(_ spool: TemporarySpool, _ lines: [LedgerLine]) throws {
        try Ledger(directory: spool.spool.ledgerDirectory).append(lines)
    }

    /// Nothing flagged, nothing needing attention, no name with two links.
    static func expectClean(_ spool: TemporarySpool, _ label: String) throws {
        let attention = try spool.names(in: .needsAttention)
        #expect(attention.isEmpty, "\(label): \(attention)")
        #expect(try spool.ledger().filter { $0.event == .invalid }.isEmpty, "\(label)")
        for state in SpoolState.allCases {
            for name in try spool.names(in: state) {
                let status = try #require(try spool.spool.directory(state).status(of: FileName(name)))
                #expect(status.links == 1, "\(label): \(state.rawValue)/\(name) has \(status.links) links")
            }
        }
        #expect(try spool.placements().values.allSatisfy { $0.count == 1 }, "\(label)")
    }

    @Test("a dropped file that is one file with its claim in sending/ (intake's rename, half done) is delivered once")
    func intakeHalfIntoSending() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server)
        // The cut: f1's copy for beta made, the dropped file renamed to
        // alpha's claim, the removal of its dropped name lost.
        try spool.drop(Self.record("f1"), as: FileName("drop-f1.json"))
        try Self.link(spool, "drop-f1.json", in: .queued, to: .sending, as: "f1@alpha.json")
        try spool.spool.deliverNewFile(Self.record("f1"), named: FileName("f1@beta.json"), into: .sending)
        try Self.write(
            spool, [Self.line("f1", "alpha", .accepted, "from drop-f1.json"), Self.line("f1", "beta", .accepted)])
        try spool.runRound()
        #expect(server.countsByKey["f1"] == 2, "once to each subscriber: \(server.countsByKey)")
        #expect(try spool.names(in: .sent) == ["f1@alpha.json", "f1@beta.json"])
        #expect(try spool.names(in: .queued).isEmpty)
        try Self.expectClean(spool, "intake into sending/")
    }

    @Test("a dropped file that is one file with its entry in queued/ (a held subscriber's) loses its dropped name")
    func intakeHalfIntoQueued() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server, ["alpha"])
        try spool.drop(Self.record("f2"), as: FileName("drop-f2.json"))
        try Self.link(spool, "drop-f2.json", in: .queued, to: .queued, as: "f2@alpha.json")
        try Self.write(spool, [Self.line("f2", "alpha", .accepted, "from drop-f2.json")])
        try spool.runRound()
        #expect(server.countsByKey["f2"] == 1)
        #expect(try spool.names(in: .sent) == ["f2@alpha.json"] && spool.names(in: .queued).isEmpty)
        try Self.expectClean(spool, "intake into queued/")
    }

    @Test("a claim whose move out of sending/ was half done stays where its ledger line says it went")
    func groupCommitHalves() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server, ["alpha"])
        for (id, state, event) in [
            ("s1", SpoolState.sent, LedgerEvent.sent), ("n1", .needsAttention, .needsAttention),
            ("d1", .queued, .deferred),
        ] {
            try spool.spool.deliverNewFile(Self.record(id), named: FileName("\(id)@alpha.json"), into: .sending)
            try Self.link(spool, "\(id)@alpha.json", in: .sending, to: state, as: "\(id)@alpha.json")
            try Self.write(spool, [Self.line(id, "alpha", event)])
        }
        let stamp = DeferralStamp(due: .now() + .seconds(3600), deferrals: 1)
        try spool.spool.directory(.queued).setModified(FileName("d1@alpha.json"), to: stamp.modified)
        var alpha = spool.configuration.subscribers[0]
        alpha.retrySchedule = [.seconds(3600)]
        spool.configuration.subscribers = [alpha]
        try spool.runRound()
        #expect(server.countsByKey.isEmpty, "nothing was due: \(server.countsByKey)")
        #expect(try spool.names(in: .sent) == ["s1@alpha.json"])
        #expect(try spool.names(in: .needsAttention) == ["n1@alpha.json"])
        #expect(try spool.names(in: .queued) == ["d1@alpha.json"] && spool.names(in: .sending).isEmpty)
        let kept = try #require(try spool.spool.directory(.queued).status(of: FileName("d1@alpha.json")))
        #expect(DeferralStamp(modified: kept.modified) == stamp, "the deferral keeps its time")
        #expect(try spool.ledger().filter { $0.event == .invalid }.isEmpty)
    }

    @Test("recovery's own move back to queued/, half done, and a resend, half done, are delivered once")
    func recoveryAndResendHalves() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server, ["alpha"])
        try spool.spool.deliverNewFile(Self.record("r1"), named: FileName("r1@alpha.json"), into: .sending)
        try Self.link(spool, "r1@alpha.json", in: .sending, to: .queued, as: "r1@alpha.json")
        try spool.spool.deliverNewFile(Self.record("t2"), named: FileName("t2@alpha.json"), into: .needsAttention)
        try Self.link(spool, "t2@alpha.json", in: .needsAttention, to: .queued, as: "t2@alpha.json")
        try Self.write(spool, [Self.line("r1", "alpha", .recovered), Self.line("t2", "alpha", .resent)])
        try spool.runRound()
        #expect(server.countsByKey == ["r1": 1, "t2": 1])
        #expect(try spool.names(in: .sent) == ["r1@alpha.json", "t2@alpha.json"])
        try Self.expectClean(spool, "recovery and resend")
    }

    @Test("an entry delivered while its old name in queued/ survived is not sent again or flagged as a twin")
    func aDeliveredEntrysOldNameGoes() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server, ["alpha"])
        try spool.spool.deliverNewFile(Self.record("e1"), named: FileName("e1@alpha.json"), into: .sent)
        try Self.link(spool, "e1@alpha.json", in: .sent, to: .queued, as: "e1@alpha.json")
        try Self.write(spool, [Self.line("e1", "alpha", .recovered), Self.line("e1", "alpha", .sent)])
        try spool.runRound()
        #expect(server.countsByKey.isEmpty)
        #expect(try spool.names(in: .sent) == ["e1@alpha.json"] && spool.names(in: .queued).isEmpty)
        try Self.expectClean(spool, "delivered")
    }

    @Test("a person's ack, half done, resolves as acknowledged; then their resend delivers it")
    func ackHalfThenResend() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server, ["alpha"])
        try spool.spool.deliverNewFile(Self.record("t1"), named: FileName("t1@alpha.json"), into: .needsAttention)
        try Self.link(spool, "t1@alpha.json", in: .needsAttention, to: .failed, as: "t1@alpha.json")
        try Self.write(spool, [Self.line("t1", "alpha", .acknowledged)])
        var selection = ItemSelection()
        selection.names = ["t1@alpha"]
        let (items, refused) = try selection.resolve(
            in: spool.spool, allowed: ManualMoves.resendStates, session: spool.session)
        #expect(refused.isEmpty, "\(refused)")
        #expect(items.map(\.state) == [.failed], "the ack's line says where it went")
        _ = try ManualMoves(session: spool.session).resend(items)
        try spool.runRound()
        #expect(server.countsByKey["t1"] == 1)
        try Self.expectClean(spool, "ack then resend")
    }

    @Test("a flagged file whose dropped name survived loses that name, not flagged twice")
    func flagHalf() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server, ["alpha"])
        try spool.drop("{broken", as: "broken.json")
        let safe = "invalid-20261201T070000Z-broken.json"
        try Self.link(spool, "broken.json", in: .queued, to: .needsAttention, as: safe)
        try Self.write(spool, [LedgerLine(time: .now(), round: "cut", subscriber: "-", key: safe, event: .invalid)])
        try spool.runRound()
        #expect(try spool.names(in: .needsAttention) == [safe] && spool.names(in: .queued).isEmpty)
        #expect(try spool.ledger().filter { $0.event == .invalid }.count == 1)
    }

    @Test("a file a script hard-linked into queued/ from elsewhere is still refused: it has no other name here")
    func aRealHardLinkIsStillRefused() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server, ["alpha"])
        let outside = spool.directory.path + "/outside.json"
        try Data(Self.record("h1")).write(to: URL(fileURLWithPath: outside))
        #expect(Glibc.link(outside, spool.path + "/queued/h1.json") == 0)
        try spool.runRound()
        #expect(server.countsByKey.isEmpty)
        let invalid = try spool.ledger().filter { $0.event == .invalid }
        #expect(invalid.count == 1 && invalid.first?.detail.contains("hard links") == true, "\(invalid.map(\.detail))")
    }
}
