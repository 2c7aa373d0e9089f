import CourierIdentifiers
import Foundation
import Glibc
import Testing

@testable import CourierOperations
@testable import CourierPosix
@testable import CourierSpool

/// A person's command racing a round or another person: the item it
/// chose moves away (send-now --attention's requeue, another's resend)
/// before its commit. Its report must say so, as it does for a move.
@Suite struct ManualRaceTests {
    @Test("delete of an item that was moved away meanwhile reports it went away, not that it was deleted")
    func aDeleteThatFindsItsItemGoneSaysSo() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try spool.spool.deliverNewFile(
            Array(#"{"id":"k1","kind":"sleep"}"#.utf8), named: FileName("k1@alpha.json"), into: .needsAttention)
        let item = SpoolItem(name: FileName("k1@alpha.json"), state: .needsAttention, entry: EntryName("k1@alpha.json"))
        // The round's requeue takes it first.
        #expect(rename(spool.path + "/needsAttention/k1@alpha.json", spool.path + "/queued/k1@alpha.json") == 0)
        let report = try ManualMoves(session: spool.session).delete([item])
        #expect(report.moved.isEmpty)
        #expect(report.refused.map(\.name) == ["k1@alpha.json"])
        #expect(try spool.names(in: .queued) == ["k1@alpha.json"])
    }

    @Test("delete of a dropped file keeps the new file a script renamed over its name after it was chosen")
    func aDeleteLeavesTheFileThatReplacedTheChosenOne() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try spool.drop(#"{"id":"old","kind":"sleep"}"#, as: "today.json")
        var selection = ItemSelection()
        selection.names = ["today.json"]
        let chosen = try selection.choose(
            in: spool.spool, allowed: ManualMoves.deleteStates, picking: ManualMoves.deletePickStates)
        #expect(chosen.items.map(\.name) == [FileName("today.json")])
        // The producer writes the next record and renames it over the name.
        let next = spool.path + "/next.json"
        #expect(FileManager.default.createFile(atPath: next, contents: Data(#"{"id":"new","kind":"sleep"}"#.utf8)))
        #expect(rename(next, spool.path + "/queued/today.json") == 0)
        let report = try ManualMoves(session: spool.session).delete(chosen.items)
        #expect(report.moved.isEmpty, "the new record was deleted in the old one's place")
        #expect(report.refused.map(\.name) == ["today.json"])
        let kept = try String(contentsOfFile: spool.path + "/queued/today.json", encoding: .utf8)
        #expect(kept.contains(#""id":"new""#))
    }
}
