import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// A file a member of the producers group drops stays that member's after a
/// rename: intake makes courier's own copy of it instead.
@Suite struct ProducerFileTests {
    @Test(
        "another user's dropped file becomes an entry of courier's own, stamped with the intake time, and its name goes",
        .asRoot("gives a dropped file to another user"))
    func aProducersFileIsCopiedIntoCouriersOwnEntries() throws {
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/"),
            TemporarySpool.subscriber("beta", url: "http://127.0.0.1:9/"),
        ])
        let text = #"{"id":"r-1","kind":"sleep"}"#
        try spool.drop(text, as: "export.json")
        let dropped = spool.path + "/queued/export.json"
        // As `touch -d 2001-01-01` or `cp -p` by a producer (nobody) would.
        #expect(chown(dropped, 65534, 65534) == 0)
        var old = [timespec(tv_sec: 978_307_200, tv_nsec: 0), timespec(tv_sec: 978_307_200, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, dropped, &old, 0) == 0)
        let before = time(nil)

        _ = try Intake(
            session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())
        )
        .run()

        let queued = try spool.names(in: .queued)
        let attention = try spool.names(in: .needsAttention)
        #expect(queued == ["r-1@alpha.json", "r-1@beta.json"], "\(queued), attention: \(attention)")
        for name in ["r-1@alpha.json", "r-1@beta.json"] {
            var status = stat()
            #expect(stat(spool.path + "/queued/" + name, &status) == 0)
            #expect(status.st_uid == geteuid(), "\(name) is still uid \(status.st_uid)'s")
            #expect(status.st_mtim.tv_sec >= before, "\(name) keeps the producer's time")
            #expect(try String(contentsOfFile: spool.path + "/queued/" + name, encoding: .utf8) == text)
        }
    }
}
