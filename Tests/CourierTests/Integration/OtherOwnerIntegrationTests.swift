import Foundation
import Glibc
import Testing

/// `sudo courier hold alpha` on a spool that is the courier user's: as
/// root, the first line of the day creates `ledger/DAY.tsv` root's, 0640,
/// and every round of the spool's owner fails to open it until midnight.
@Suite(.tags(.integration)) struct OtherOwnerTests {
    static let nobody: uid_t = 65534

    /// A spool made by `init` and then given to nobody, as a package
    /// makes it courier's, with one subscriber configured.
    static func nobodysSpool() throws -> (
        place: TemporaryDirectory, spool: String, config: String, courier: CourierBinary
    ) {
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
        #expect(try Shell.run(["chown", "-R", "\(nobody):\(nobody)", spool]).status == 0)
        return (place, spool, config, courier)
    }

    @Test(
        "a command that writes refuses to run as root on a spool another user owns, and leaves no file of root's",
        .asRoot("changes a spool's owner"))
    func rootMayNotWriteAnotherUsersSpool() throws {
        let (place, spool, config, courier) = try Self.nobodysSpool()
        let held = try courier.run(["--config", config, "hold", "alpha", "--reason", "maintenance"])
        #expect(held.status != 0, "\(held.output)")
        #expect(held.error.contains("sudo -u"), "\(held.error)")
        let made = try FileManager.default.subpathsOfDirectory(atPath: spool).filter { name in
            ((try? FileManager.default.attributesOfItem(atPath: spool + "/" + name))?[.ownerAccountID] as? Int)
                != Int(Self.nobody)
        }
        #expect(made.isEmpty, "root made \(made)")
        // Reading is harmless: status still works as root.
        #expect(try courier.run(["--config", config, "status"]).status == 0)
        withExtendedLifetime(place) {}
    }

    @Test(
        "root's enqueue into a spool another user owns drops a file of that owner's, which its rounds can read",
        .asRoot("changes a spool's owner"))
    func rootEnqueueDropsTheOwnersFile() throws {
        let (place, spool, config, courier) = try Self.nobodysSpool()
        try place.write(#"{"id":"r-1","kind":"k","data":{}}"#, to: "record.json")
        // `sudo courier enqueue`, as a person or a root cron job types it.
        let queued = try courier.run(["--config", config, "enqueue", place.path + "/record.json"])
        #expect(queued.status == 0, "\(queued.error)")
        let names = try FileManager.default.contentsOfDirectory(atPath: spool + "/queued")
        #expect(names.count == 1, "\(names)")
        for name in names {
            let attributes = try FileManager.default.attributesOfItem(atPath: spool + "/queued/" + name)
            // Root's 0640 file would be one nobody's rounds cannot read.
            #expect(attributes[.ownerAccountID] as? Int == Int(Self.nobody), "queued/\(name): \(attributes)")
            #expect(attributes[.groupOwnerAccountID] as? Int == Int(Self.nobody), "queued/\(name): \(attributes)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool + "/tmp").isEmpty)
    }

    @Test(
        "init run as root in a spool directory another user owns makes the folders that user's",
        .asRoot("changes a folder's owner"))
    func rootInitMakesTheOwnersFolders() throws {
        let place = TemporaryDirectory("owner")
        let spool = place.path + "/spool"
        let nobody: uid_t = 65534
        // The manual install's `install -d -o courier`, then init without
        // its `sudo -u courier`.
        let install = ["install", "-d", "-o", "\(nobody)", "-g", "\(nobody)", "-m", "0750", spool]
        #expect(try Shell.run(install).status == 0)
        let courier = try CourierBinary.locate()
        let made = try courier.run(["--spool", spool, "init"])
        #expect(made.status == 0, "\(made.error)")
        let folders = try FileManager.default.subpathsOfDirectory(atPath: spool)
        #expect(folders.contains("queued") && folders.contains(".courier/held"), "\(folders)")
        for folder in folders {
            let attributes = try FileManager.default.attributesOfItem(atPath: spool + "/" + folder)
            #expect(attributes[.ownerAccountID] as? Int == Int(nobody), "\(folder): \(attributes)")
            #expect(attributes[.groupOwnerAccountID] as? Int == Int(nobody), "\(folder): \(attributes)")
        }
    }
}
