import Foundation
import Glibc
import Testing

@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierSpool
@testable import CourierSupport

/// `resend`, `ack` and `delete` on many items at once (issue 12): names,
/// `--all`, filters; a name that cannot move is reported and the rest move.
@Suite struct BulkMoveTests {
    /// Items placed by hand: (state, entry file name, age in seconds).
    static func spool(_ items: [(SpoolState, String, Int64)]) throws -> TemporarySpool {
        let spool = try TemporarySpool(subscribers: [])
        for (state, name, age) in items {
            try spool.spool.deliverNewFile(
                Array(#"{"id":"x","kind":"sleep"}"#.utf8), named: FileName(name), into: state)
            try spool.spool.directory(state).setModified(FileName(name), to: .now() - .seconds(age))
        }
        return spool
    }

    static let mixed: [(SpoolState, String, Int64)] = [
        (.needsAttention, "a-1@alpha.json", 7200), (.needsAttention, "a-2@alpha.json", 60),
        (.failed, "a-3@alpha.json", 7200), (.needsAttention, "b-1@beta.json", 7200),
        (.sent, "a-4@alpha.json", 7200),
    ]

    @Test("resend --all moves every failed and needsAttention item, one ledger line each")
    func resendAll() throws {
        let spool = try Self.spool(Self.mixed)
        var selection = ItemSelection()
        selection.all = true
        let (items, refused) = try selection.resolve(in: spool.spool, allowed: ManualMoves.resendStates)
        #expect(refused.isEmpty)
        let report = try ManualMoves(session: spool.session).resend(items)
        #expect(report.moved.count == 4 && report.refused.isEmpty)
        #expect(
            try spool.names(in: .queued) == ["a-1@alpha.json", "a-2@alpha.json", "a-3@alpha.json", "b-1@beta.json"])
        #expect(try spool.names(in: .sent) == ["a-4@alpha.json"], "sent/ is never touched")
        #expect(try spool.ledger().filter { $0.event == .resent }.count == 4)
    }

    @Test("filters pick by subscriber, state and age, and narrow named items too")
    func filtersNarrow() throws {
        let spool = try Self.spool(Self.mixed)
        var selection = ItemSelection()
        selection.subscriber = SubscriberName("alpha")
        selection.olderThan = .seconds(3600)
        let old = try selection.resolve(in: spool.spool, allowed: ManualMoves.resendStates).items
        #expect(Set(old.map(\.name.description)) == ["a-1@alpha.json", "a-3@alpha.json"])

        selection.states = [.needsAttention]
        let waiting = try selection.resolve(in: spool.spool, allowed: ManualMoves.resendStates).items
        #expect(waiting.map(\.name.description) == ["a-1@alpha.json"])

        var named = ItemSelection()
        named.names = ["a-1@alpha", "a-2@alpha"]
        named.olderThan = .seconds(3600)
        #expect(
            try named.resolve(in: spool.spool, allowed: ManualMoves.resendStates).items.map(\.name.description) == [
                "a-1@alpha.json"
            ])
    }

    @Test("an unknown or misplaced name is reported and the others still move")
    func refusalsDoNotStopTheRest() throws {
        let spool = try Self.spool(Self.mixed)
        var selection = ItemSelection()
        selection.names = ["a-1@alpha", "no-such@alpha", "a-4@alpha", "b-1"]
        let (items, refused) = try selection.resolve(in: spool.spool, allowed: ManualMoves.acknowledgeStates)
        #expect(refused.map(\.name) == ["no-such@alpha", "a-4@alpha"])
        #expect(refused.last?.reason.contains("sent/a-4@alpha.json") == true, "\(refused)")
        let report = try ManualMoves(session: spool.session).acknowledge(items)
        #expect(report.moved.map(\.item.name.description) == ["a-1@alpha.json", "b-1@beta.json"])
        #expect(try spool.names(in: .failed) == ["a-1@alpha.json", "a-3@alpha.json", "b-1@beta.json"])
    }

    @Test("delete removes items from needsAttention and failed only, each after a deleted line")
    func deleteRemovesWithALine() throws {
        let spool = try Self.spool(Self.mixed)
        var selection = ItemSelection()
        selection.states = [.failed]
        let (items, _) = try selection.resolve(in: spool.spool, allowed: ManualMoves.deleteStates)
        let report = try ManualMoves(session: spool.session).delete(items)
        #expect(report.moved.count == 1 && report.moved.first?.to == nil)
        #expect(try spool.names(in: .failed).isEmpty)
        let deleted = try spool.ledger().filter { $0.event == .deleted }
        #expect(deleted.map(\.key) == ["a-3"] && deleted.first?.round == "manual")

        let sent = try ManualMoves(session: spool.session).delete(try spool.spool.resolve("a-4@alpha"))
        #expect(sent.moved.isEmpty && sent.refused.count == 1)
        #expect(try spool.names(in: .sent) == ["a-4@alpha.json"])
    }

    @Test("the same item named twice, or by its key and by its file name, moves once and is not reported")
    func duplicateNamesMoveOnce() throws {
        let spool = try Self.spool(Self.mixed)
        var selection = ItemSelection()
        selection.names = ["a-1@alpha", "a-1@alpha.json", "needsAttention/a-1@alpha.json", "a-1", "a-1@alpha"]
        let (items, refused) = try selection.resolve(in: spool.spool, allowed: ManualMoves.resendStates)
        #expect(refused.isEmpty)
        let report = try ManualMoves(session: spool.session).resend(items)
        #expect(report.moved.map(\.item.name.description) == ["a-1@alpha.json"])
        #expect(report.refused.isEmpty, "\(report.refused)")
        #expect(try spool.ledger().filter { $0.event == .resent }.count == 1, "one line for one move")
    }

    @Test("a hidden name, . , .. or / is no item: delete leaves a hidden file alone and says it found nothing")
    func hiddenNamesAreNoItems() throws {
        let spool = try Self.spool(Self.mixed)
        #expect(FileManager.default.createFile(atPath: spool.path + "/failed/.keep", contents: Data("x".utf8)))
        var selection = ItemSelection()
        selection.names = [".keep", "failed/.keep", ".", "..", "/", "failed/.."]
        let (items, refused) = try selection.resolve(in: spool.spool, allowed: ManualMoves.deleteStates)
        #expect(items.isEmpty)
        #expect(refused.map(\.name) == selection.names)
        #expect(refused.allSatisfy { $0.reason.hasPrefix("no item") }, "\(refused)")
        _ = try ManualMoves(session: spool.session).delete(items)
        #expect(FileManager.default.fileExists(atPath: spool.path + "/failed/.keep"))
    }

    @Test(
        "a dropped name finds only the files flagged under that name: delete y.json leaves the one dropped as xZ-y.json"
    )
    func droppedNamesMatchWhole() throws {
        let spool = try Self.spool([
            (.needsAttention, "invalid-20261130T070000Z-y.json", 60),
            (.needsAttention, "invalid-20261130T070000Z-xZ-y.json", 60),
            (.failed, "invalid-20261130T080000Z-copy-of-y.json", 60),
        ])
        var selection = ItemSelection()
        selection.names = ["y.json"]
        let (items, refused) = try selection.resolve(in: spool.spool, allowed: ManualMoves.deleteStates)
        #expect(refused.isEmpty)
        #expect(items.map(\.name.description) == ["invalid-20261130T070000Z-y.json"])
        _ = try ManualMoves(session: spool.session).delete(items)
        #expect(try spool.names(in: .needsAttention) == ["invalid-20261130T070000Z-xZ-y.json"])
        #expect(try spool.names(in: .failed) == ["invalid-20261130T080000Z-copy-of-y.json"])
    }

    @Test("a flagged file resent unchanged is flagged again under the name it was dropped as, not a longer one")
    func aResentFlaggedFileKeepsItsDroppedName() throws {
        let (spool, _) = try IntakeTests.spoolWithServer()
        try spool.drop("not json", as: "broken.json")
        try spool.runRound()
        let flagged = try #require(try spool.names(in: .needsAttention).first)
        // The flagging's TIME is whole seconds: the first one is made a day
        // older instead of waiting for the clock to tick, so the second,
        // now, cannot fall in its second.
        let first = "invalid-20261130T070000Z-broken.json"
        try spool.spool.directory(.needsAttention).rename(
            FileName(flagged), to: spool.spool.directory(.needsAttention), as: FileName(first), replacing: false)
        #expect(first.count == flagged.count, "\(flagged)")
        _ = try ManualMoves(session: spool.session).resend(try spool.spool.resolve("broken.json"))
        try spool.runRound()
        let again = try spool.names(in: .needsAttention)
        #expect(again.count == 1 && again != [first], "\(again)")
        #expect(
            again.allSatisfy { $0.hasPrefix("invalid-") && $0.hasSuffix("Z-broken.json") && $0.count == first.count })
        #expect(try spool.spool.resolve("broken.json").map(\.name.description) == again)
    }
}
