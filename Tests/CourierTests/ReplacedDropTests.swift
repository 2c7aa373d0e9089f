import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// A script that drops under one fixed name (`mv tmp/export.json
/// queued/`, README's own example) can rename a new file over a dropped
/// name that intake has read and not yet committed. The rename intake then
/// makes must not carry the new file under the first record's entry: the
/// new record would sit in `sending/` or `sent/` under another key, and
/// never be taken in.
@Suite struct ReplacedDropTests {
    static let first = #"{"id":"first","kind":"sleep"}"#
    static let second = #"{"id":"second","kind":"sleep","n":2}"#

    /// Drops `first` as export.json, lets intake read it, then renames
    /// `second` over the same name, as the script's next export would.
    static func replacedAfterRead(sendNow: Bool) throws -> (TemporarySpool, [DeliveryItem]) {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try spool.drop(first, as: "export.json")
        let intake = IntakeSession(
            intake: Intake(
                session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())))
        try intake.offer(FileName("export.json"), kind: nil)
        try second.write(toFile: spool.path + "/tmp/export.json", atomically: false, encoding: .utf8)
        #expect(rename(spool.path + "/tmp/export.json", spool.path + "/queued/export.json") == 0)
        let claimed = try intake.commit(sendNow: { _ in sendNow })
        return (spool, claimed)
    }

    static func contents(_ spool: TemporarySpool, _ state: SpoolState, _ name: String) throws -> String {
        try String(contentsOfFile: spool.path + "/\(state.rawValue)/\(name)", encoding: .utf8)
    }

    @Test("a file renamed over a dropped name after intake read it is not sent on as the first record's claimed entry")
    func aReplacedDropIsNotClaimedUnderTheFirstRecordsName() throws {
        let (spool, claimed) = try Self.replacedAfterRead(sendNow: true)
        #expect(claimed.map { String(decoding: $0.body, as: UTF8.self) } == [Self.first])
        // What the round settles into sent/ is what it sent.
        #expect(try Self.contents(spool, .sending, "first@alpha.json") == Self.first)
        // The new file waits under its dropped name for the next intake.
        #expect(try Self.contents(spool, .queued, "export.json") == Self.second)
    }

    @Test("a file renamed over a dropped name after intake read it stays under its dropped name")
    func aReplacedDropStaysUnderItsDroppedName() throws {
        let (spool, _) = try Self.replacedAfterRead(sendNow: false)
        #expect(try Self.contents(spool, .queued, "first@alpha.json") == Self.first)
        #expect(try Self.contents(spool, .queued, "export.json") == Self.second)
        // The next round takes the new record in as itself.
        _ = try Intake(
            session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())
        )
        .run()
        #expect(try spool.names(in: .queued) == ["first@alpha.json", "second@alpha.json"])
        #expect(try spool.names(in: .needsAttention).isEmpty)
    }

    @Test("a file renamed over a duplicate's dropped name after intake read it is not removed as the duplicate")
    func aReplacedDuplicateIsNotRemoved() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        try spool.drop(Self.first, as: "export.json")
        let round = RoundID.make(at: .now())
        _ = try Intake(session: spool.session, settings: IntakeSettings(spool.configuration), round: round).run()
        // The same record again, then the script's next export over it.
        try spool.drop(Self.first, as: "export.json")
        let intake = IntakeSession(
            intake: Intake(session: spool.session, settings: IntakeSettings(spool.configuration), round: round))
        try intake.offer(FileName("export.json"), kind: nil)
        try Self.second.write(toFile: spool.path + "/tmp/export.json", atomically: false, encoding: .utf8)
        #expect(rename(spool.path + "/tmp/export.json", spool.path + "/queued/export.json") == 0)
        _ = try intake.commit()
        #expect(try Self.contents(spool, .queued, "export.json") == Self.second)
    }
}
