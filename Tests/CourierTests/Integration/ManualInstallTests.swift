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

    /// One README line as it runs in `root` for `user`: sudo dropped (the
    /// test is root), `sudo -u courier` through runuser, the courier user's
    /// name and the system paths replaced by the scratch ones, and make
    /// installing the test's binary into `root`.
    static func scratch(_ line: String, root: String, user: String, binary: String) -> String {
        var command = line.components(separatedBy: "  #").first ?? line
        command = command.replacingOccurrences(of: "/var/spool/courier", with: root + "/var/spool/courier")
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
        defer { withExtendedLifetime(account) {} }
        let binary = try CourierBinary.locate().path
        for step in steps {
            let command = Self.scratch(step, root: root, user: user, binary: binary)
            let result = try Shell.run(
                ["sh", "-c", command], environment: ["COURIER_CONFIG": root + "/etc/courier/courier.conf"])
            try #require(result.status == 0, "`\(step)`, run as `\(command)`: \(result.output)")
        }
        let spool = try FileManager.default.attributesOfItem(atPath: root + "/var/spool/courier")
        #expect(spool[.ownerAccountName] as? String == user)
        #expect(spool[.posixPermissions] as? Int == 0o750)
        let queued = try FileManager.default.attributesOfItem(atPath: root + "/var/spool/courier/queued")
        #expect(queued[.ownerAccountName] as? String == user)
        let config = try FileManager.default.attributesOfItem(atPath: root + "/etc/courier/courier.conf")
        #expect(config[.groupOwnerAccountName] as? String == user)
        #expect(config[.posixPermissions] as? Int == 0o640)
    }
}
