import Foundation
import Glibc
import Testing

/// The README's install without a package, run as written in a scratch root:
/// `make install` into a DESTDIR, a real system user, the spool made and
/// checked by that user.
@Suite(.serialized, .tags(.integration)) struct ManualInstallTests {
    /// The command lines of the README's install block from "without a
    /// package" on, except those that change the host itself (the build,
    /// an editor, systemctl, journalctl).
    static func manualSteps() throws -> [String] {
        let block = try ReadmeWalkTests.block(under: "Install as a service")
        let lines = block.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("# or, without a package") })
        return lines[(start + 1)...].filter { line in
            !line.hasPrefix("#") && !line.trimmingCharacters(in: .whitespaces).isEmpty
                && !["swift build", "sudoedit", "sudo systemctl", "journalctl"].contains { line.hasPrefix($0) }
        }
    }

    /// The accounts the README names, as this test calls them.
    struct Names {
        /// `courier`, and the producers' group.
        let user, producers: String
        /// The README's `alice`.
        let producer: String
    }

    /// One README line as it runs in `root` for `user`: sudo dropped (the
    /// test is root), `sudo -u courier` through runuser, the courier user's
    /// name and the system paths replaced by the scratch ones, and make
    /// installing the test's binary into `root`.
    static func scratch(_ line: String, root: String, names: Names, binary: String) -> String {
        let user = names.user
        var command = line.components(separatedBy: "  #").first ?? line
        command = command.replacingOccurrences(of: "courier-producers", with: names.producers)
            .replacingOccurrences(of: "adduser courier ", with: "adduser \(user) ")
            .replacingOccurrences(of: "adduser alice ", with: "adduser \(names.producer) ")
            .replacingOccurrences(of: "/var/spool/courier", with: root + "/var/spool/courier")
            .replacingOccurrences(of: "/etc/courier/", with: root + "/etc/courier/")
            .replacingOccurrences(
                of: "sudo -u courier courier ", with: "runuser -u \(user) -- \(root)/usr/bin/courier "
            )
            .replacingOccurrences(of: "sudo ", with: "")
            .replacingOccurrences(of: "-o courier -g courier", with: "-o \(user) -g \(user)")
            .replacingOccurrences(of: "root:courier ", with: "root:\(user) ")
        if command.hasPrefix("adduser --system") && command.hasSuffix(" courier") {
            command = String(command.dropLast("courier".count)) + user
        }
        if command.hasPrefix("make install") {
            command += " DESTDIR=\(root) BINARY=\(binary) SPOOL=\(root)/var/spool/courier"
        }
        return command
    }

    @Test(
        "the README's install without a package works as written: make install, the user, the spool, init, check",
        .asRoot("adds a system user"), .needs("make", "adduser", "runuser"))
    func theManualInstallWorksAsWritten() throws {
        let steps = try Self.manualSteps()
        #expect(steps.contains { $0.contains("init") } && steps.contains { $0.contains("check") }, "\(steps)")
        let scratch = TemporaryDirectory("manual-install")
        chmod(scratch.path, 0o755)
        let root = scratch.path
        // Debian's /var/spool: root's, 0755, as a fresh system has it.
        try FileManager.default.createDirectory(atPath: root + "/var/spool", withIntermediateDirectories: true)
        let user = TemporaryAccount.freshName("inst")
        let account = TemporaryAccount(adopting: user, kind: .user)
        let group = TemporaryAccount(adopting: TemporaryAccount.freshName("prod"), kind: .group)
        // The README's alice exists before she joins the group.
        let alice = try TemporaryAccount(.user, label: "alice")
        defer { withExtendedLifetime((account, group, alice)) {} }
        let names = Names(user: user, producers: group.name, producer: alice.name)
        let binary = try CourierBinary.locate().path
        for step in steps {
            let command = Self.scratch(step, root: root, names: names, binary: binary)
            let result = try Shell.run(
                ["sh", "-c", command], environment: ["COURIER_CONFIG": root + "/etc/courier/courier.conf"])
            try #require(result.status == 0, "`\(step)`, run as `\(command)`: \(result.output)")
        }
        let spool = try FileManager.default.attributesOfItem(atPath: root + "/var/spool/courier")
        #expect(spool[.ownerAccountName] as? String == user)
        // 0750, and o+x for the producers (init --group).
        #expect(spool[.posixPermissions] as? Int == 0o751)
        let queued = try FileManager.default.attributesOfItem(atPath: root + "/var/spool/courier/queued")
        #expect(queued[.ownerAccountName] as? String == user)
        let config = try FileManager.default.attributesOfItem(atPath: root + "/etc/courier/courier.conf")
        #expect(config[.groupOwnerAccountName] as? String == group.name)
        #expect(config[.posixPermissions] as? Int == 0o640)

        // alice, now a producer, enqueues under her own strict umask.
        let enqueued = try alice.run(
            "echo '{\"id\":\"a-1\",\"kind\":\"sleep\"}' | \(root)/usr/bin/courier enqueue -", umask: "0077",
            environment: ["COURIER_CONFIG": root + "/etc/courier/courier.conf"])
        #expect(enqueued.status == 0, "\(enqueued.output)")
        let dropped = try FileManager.default.contentsOfDirectory(atPath: root + "/var/spool/courier/queued")
        #expect(dropped.count == 1 && dropped.first?.hasSuffix(".a-1.json") == true, "\(dropped)")
        for name in dropped {
            let file = try FileManager.default.attributesOfItem(atPath: root + "/var/spool/courier/queued/" + name)
            #expect(file[.groupOwnerAccountName] as? String == group.name)
            #expect(file[.posixPermissions] as? Int == 0o640)
        }
    }
}
