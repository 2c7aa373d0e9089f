import CourierIdentifiers
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// PostfixVerbTests with a round against a real subscriber on loopback.
@Suite(.tags(.integration)) struct PostfixVerbIntegrationTests {
    @Test("a round given chosen entries sends only those, due or not, and leaves the rest in queued/ counted")
    func aRoundSendsOnlyTheChosen() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try RoundTests.spool(server: server)
        for id in ["a", "b", "c"] { try spool.drop(#"{"id":"\#(id)","kind":"sleep"}"#, as: "\(id)@alpha.json") }
        try spool.dropRecord(id: "dropped")
        var round = Round(session: spool.session, configuration: spool.configuration, mode: .foreground)
        round.chosen = [try #require(EntryName("b@alpha", requireExtension: false))]
        guard case .ran(let summary) = try round.run(wait: true) else {
            Issue.record("the spool was busy")
            return
        }
        #expect(server.requests.map { $0.header("idempotency-key") } == ["b"])
        #expect(try spool.names(in: .sent) == ["b@alpha.json"])
        #expect(try spool.names(in: .queued) == ["a@alpha.json", "c@alpha.json", "dropped@alpha.json"])
        #expect(summary.sent == 1 && summary.notChosen == 3 && summary.accepted == 1, "\(summary)")
    }
}
