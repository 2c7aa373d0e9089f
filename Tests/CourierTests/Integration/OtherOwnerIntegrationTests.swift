import Foundation
import Glibc
import Testing

/// `sudo courier hold alpha` on a spool that is the courier user's: as
/// root, the first line of the day creates `ledger/DAY.tsv` root's, 0640,
/// and every round of the spool's owner fails to open it until midnight.
@Suite(.tags(.integration)) struct OtherOwnerTests {
    @Test(
        "a command that writes refuses to run as root on a spool another user owns, and leaves no file of root's",
        .asRoot("changes a spool's owner"))
    func rootMayNotWriteAnotherUsersSpool() throws {
        let place = TemporaryDirectory("owner")
        let spool = place.path + "/spool"
        let courier = try CourierBinary.locate()
        try place.write(
            """
            [courier]
            spool = \(spool)
            [subscriber alpha]
            url = http://127.0.0.1:9/
            """, to: "courier.conf")
        let config = place.path + "/courier.conf"
        #expect(try courier.run(["--config", config, "init"]).status == 0)
        // The spool becomes nobody's, as a package makes it courier's.
        let nobody: uid_t = 65534
        #expect(try Shell.run(["chown", "-R", "\(nobody):\(nobody)", spool]).status == 0)
        let held = try courier.run(["--config", config, "hold", "alpha", "--reason", "maintenance"])
        #expect(held.status != 0, "\(held.output)")
        #expect(held.error.contains("sudo -u"), "\(held.error)")
        let made = try FileManager.default.subpathsOfDirectory(atPath: spool).filter { name in
            ((try? FileManager.default.attributesOfItem(atPath: spool + "/" + name))?[.ownerAccountID] as? Int)
                != Int(nobody)
        }
        #expect(made.isEmpty, "root made \(made)")
        // Reading is harmless: status still works as root.
        #expect(try courier.run(["--config", config, "status"]).status == 0)
    }
}
