import Foundation
import Testing

@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierTransport

/// Holding a subscriber (issue 12, item 3): a file in `.courier/held/`.
@Suite struct HoldTests {
    static func spool() throws -> TemporarySpool {
        try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/"),
            TemporarySpool.subscriber("beta", url: "http://127.0.0.1:9/"),
        ])
    }

    /// A hold as a person makes it by hand.
    static func touchHold(_ spool: TemporarySpool, _ name: String, reason: String = "") throws {
        let folder = try #require(try spool.spool.heldFolder())
        try spool.spool.deliverNewFile(Array(reason.utf8), named: FileName(name), into: folder)
    }

    @Test("a held subscriber is sent nothing: its entries stay in queued/, the others go, the summary counts them")
    func aHeldSubscriberGetsNothing() throws {
        let spool = try Self.spool()
        try Self.touchHold(spool, "alpha", reason: "maintenance until noon\nsecond line")
        try DeliveryStageTests.queue(spool, ["a1", "a2"], subscriber: "alpha")
        try DeliveryStageTests.queue(spool, ["b1"], subscriber: "beta")
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        let summary = try DeliveryStageTests.pass(spool, mode: .foreground, transport: transport).run()

        #expect(transport.started.map(\.key) == ["b1"])
        #expect(try spool.names(in: .queued) == ["a1@alpha.json", "a2@alpha.json"])
        #expect(summary.held == ["alpha": 2])
        let holds = try spool.spool.holds()
        #expect(holds.map(\.subscriber.value) == ["alpha"])
        #expect(holds.first?.reason == "maintenance until noon")
    }

    @Test("when every subscriber is held the round still ends, and counts what it left")
    func everySubscriberHeld() throws {
        let spool = try Self.spool()
        try Self.touchHold(spool, "alpha")
        try Self.touchHold(spool, "beta")
        try DeliveryStageTests.queue(spool, ["a1"], subscriber: "alpha")
        try DeliveryStageTests.queue(spool, ["b1", "b2"], subscriber: "beta")
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(transport.started.isEmpty)
        #expect(summary.held == ["alpha": 1, "beta": 2])
    }

    @Test("names in held/ that cannot be a subscriber's, and holds of subscribers not configured, hold nothing")
    func strayHoldFiles() throws {
        let spool = try Self.spool()
        try Self.touchHold(spool, "alpha~")
        try Self.touchHold(spool, "gamma")
        try DeliveryStageTests.queue(spool, ["a1"], subscriber: "alpha")
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        #expect(transport.started.map(\.key) == ["a1"])
        #expect(summary.held == [:])
        #expect(try spool.spool.holds().map(\.subscriber.value) == ["gamma"])
    }

    @Test("a spool made before holds, without .courier/held/, has none")
    func noHeldFolder() throws {
        let spool = try Self.spool()
        try FileManager.default.removeItem(atPath: spool.path + "/.courier/held")
        #expect(try spool.spool.holds().isEmpty)
    }
}

/// `courier hold` and `release` as operations.
@Suite struct HoldingTests {
    @Test("hold writes .courier/held/NAME with the reason after a held ledger line; holding again keeps since when")
    func holdAndHoldAgain() throws {
        let spool = try HoldTests.spool()
        let alpha = try TemporarySpool.subscriberName("alpha")
        let first = try Holding(session: spool.session).hold(alpha, reason: "maintenance")
        let text = try String(contentsOfFile: spool.path + "/.courier/held/alpha", encoding: .utf8)
        #expect(text == "maintenance\n")
        let since = Timestamp(secondsSinceEpoch: 1_800_000_000)
        try #require(try spool.spool.heldFolder()).setModified(FileName("alpha"), to: since)
        let again = try Holding(session: spool.session).hold(alpha, reason: "longer")
        #expect(again.since == since && first.reason == "maintenance")
        #expect(try spool.spool.holds() == [Hold(subscriber: alpha, since: since, reason: "longer")])
        let lines = try spool.ledger()
        #expect(lines.map(\.event) == [.held, .held])
        #expect(lines.map(\.detail) == ["held by a person: maintenance", "held by a person: longer"])
        #expect(lines.allSatisfy { $0.round == "manual" && $0.subscriber == "alpha" && $0.key == "-" })
    }

    @Test("release removes the hold after a released ledger line; releasing what is not held does nothing")
    func release() throws {
        let spool = try HoldTests.spool()
        let alpha = try TemporarySpool.subscriberName("alpha")
        #expect(try Holding(session: spool.session).release(alpha) == nil)
        try Holding(session: spool.session).hold(alpha, reason: "")
        let released = try #require(try Holding(session: spool.session).release(alpha))
        #expect(released.subscriber == alpha)
        #expect(try spool.spool.holds().isEmpty)
        let lines = try spool.ledger()
        #expect(lines.map(\.event) == [.held, .released])
        #expect(lines.last?.detail.hasPrefix("released by a person; held since ") == true)
    }
}
