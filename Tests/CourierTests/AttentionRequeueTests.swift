import Foundation
import Testing

@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// `send-now --attention` (issue 12, item 5): the manual "dispatch now"
/// sends every transient failure in needsAttention/ again, in the same
/// foreground round.
@Suite struct AttentionRequeueTests {
    /// A subscriber that is down (503) for t-keys and refuses p-keys (400)
    /// until `up` is set; then it takes everything.
    final class Switch: @unchecked Sendable {
        private let lock = NSLock()
        private var isUp = false
        var up: Bool {
            get { lock.withLock { isUp } }
            set { lock.withLock { isUp = newValue } }
        }
    }

    static func setUp() throws -> (TemporarySpool, LoopbackServer, Switch) {
        let state = Switch()
        let server = try LoopbackServer { request, _ in
            if state.up { return .respond(.json(201, "{}")) }
            return .respond(.json(request.header("idempotency-key")?.hasPrefix("p") == true ? 400 : 503, "{}"))
        }
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url), TemporarySpool.subscriber("beta", url: server.url),
        ])
        return (spool, server, state)
    }

    static func foreground(_ spool: TemporarySpool) throws -> RoundSummary {
        var round = Round(session: spool.session, configuration: spool.configuration, mode: .foreground)
        round.retryAttention = true
        guard case .ran(let summary) = try round.run(wait: true) else { throw TestFailure("busy") }
        return summary
    }

    @Test("every transient failure goes back and is sent in the same round; what a retry cannot fix stays")
    func transientFailuresAreSentAgain() throws {
        let (spool, server, state) = try Self.setUp()
        for id in ["t1", "t2", "p1"] {
            try spool.dropRecord(id: id, kind: "sleep", extra: #","subscribers":["alpha"]"#)
        }
        try spool.runRound()
        #expect(try spool.names(in: .needsAttention) == ["p1@alpha.json", "t1@alpha.json", "t2@alpha.json"])

        state.up = true
        let summary = try Self.foreground(spool)
        #expect(summary.fromAttention == 2)
        #expect(try spool.names(in: .sent) == ["t1@alpha.json", "t2@alpha.json"])
        #expect(try spool.names(in: .needsAttention) == ["p1@alpha.json"])
        #expect(server.countsByKey["t1"] == 2 && server.countsByKey["p1"] == 1)
        let resent = try spool.ledger().filter { $0.event == .resent }
        #expect(resent.map(\.key).sorted() == ["t1", "t2"])
        #expect(resent.allSatisfy { $0.round == summary.round.value && $0.detail.hasPrefix("send-now --attention") })
    }

    @Test("a held subscriber's transient failures stay in needsAttention/; a plain send-now moves none")
    func heldAndPlainRounds() throws {
        let (spool, server, state) = try Self.setUp()
        defer { withExtendedLifetime(server) {} }
        try spool.dropRecord(id: "ta", kind: "sleep", extra: #","subscribers":["alpha"]"#)
        try spool.dropRecord(id: "tb", kind: "sleep", extra: #","subscribers":["beta"]"#)
        try spool.runRound()
        state.up = true
        let plain = try spool.runRound(.foreground)
        #expect(plain.fromAttention == nil && plain.sent == 0)

        try Holding(session: spool.session).hold(try TemporarySpool.subscriberName("alpha"), reason: "")
        let summary = try Self.foreground(spool)
        #expect(summary.fromAttention == 1)
        let sent = try spool.names(in: .sent)
        let attention = try spool.names(in: .needsAttention)
        #expect(sent == ["tb@beta.json"], "\(sent)")
        #expect(attention == ["ta@alpha.json"], "\(attention)")
    }
}
