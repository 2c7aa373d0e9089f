import Foundation
import Glibc
import Testing

@testable import CourierCLI
@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// Units, install, .deb, man pages: Courier as a Unix service.
@Suite(.serialized, .tags(.integration)) struct PackagingTests {
    static func install(into root: String, prefix: String = "/usr", spool: String? = nil) throws -> Shell.Result {
        let binary = try CourierBinary.locate().path
        return try Shell.run(
            [
                "make", "--no-print-directory", "install", "DESTDIR=\(root)", "PREFIX=\(prefix)", "BINARY=\(binary)",
            ] + (spool.map { ["SPOOL=\($0)"] } ?? []))
    }

    @Test(.needs("make")) func makeInstallLaysOutTheServiceAndKeepsAnEditedConfig() throws {
        let root = TemporaryDirectory("install")
        let first = try Self.install(into: root.path)
        #expect(first.status == 0, "\(first.output)")
        for path in [
            "usr/bin/courier", "usr/lib/systemd/system/courier.service", "usr/lib/systemd/system/courier.timer",
            "usr/lib/systemd/system/courier.path", "usr/lib/systemd/system/courier-prune.service",
            "usr/lib/systemd/system/courier-prune.timer", "usr/lib/systemd/system/courier-catalog.timer",
            "usr/lib/systemd/system/courier-catalog.service", "usr/lib/systemd/system/courier-sync-request.path",
            "usr/lib/systemd/system/courier-sync-request.service", "usr/lib/systemd/system/courier-shared.timer",
            "usr/lib/systemd/system/courier@.service", "usr/lib/systemd/system/courier@.timer",
            "etc/courier/courier.conf", "usr/share/man/man1/courier.1",
            "usr/share/man/man5/courier.conf.5", "usr/share/bash-completion/completions/courier",
            "usr/share/zsh/vendor-completions/_courier", "usr/share/fish/vendor_completions.d/courier.fish",
            "usr/share/courier/courier-alerts.yml",
        ] {
            #expect(FileManager.default.fileExists(atPath: root.path + "/" + path), "\(path)")
        }
        let config = try String(contentsOfFile: root.path + "/etc/courier/courier.conf", encoding: .utf8)
        #expect(config.contains("spool = /var/spool/courier"))
        _ = try Configuration.parse(Array(config.utf8), file: "/etc/courier/courier.conf")

        try "; edited by the admin\n".appendingTo(root.path + "/etc/courier/courier.conf")
        let second = try Self.install(into: root.path)
        #expect(second.output.contains("keeping the existing"))
        #expect(
            try String(contentsOfFile: root.path + "/etc/courier/courier.conf", encoding: .utf8).hasSuffix(
                "; edited by the admin\n"))

        // PREFIX reaches the units' ExecStart.
        let local = TemporaryDirectory("install")
        #expect(try Self.install(into: local.path, prefix: "/usr/local").status == 0)
        let unit = try String(
            contentsOfFile: local.path + "/usr/local/lib/systemd/system/courier.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/courier run --background"))

        // SPOOL reaches every unit that names the spool, and a new config.
        let elsewhere = TemporaryDirectory("install")
        #expect(try Self.install(into: elsewhere.path, spool: "/srv/courier").status == 0)
        let units = elsewhere.path + "/usr/lib/systemd/system"
        var named = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: units) {
            let text = try String(contentsOfFile: units + "/" + name, encoding: .utf8)
            #expect(!text.contains("/var/spool/courier"), "\(name) still names /var/spool/courier")
            if text.contains("/srv/courier") { named += 1 }
        }
        #expect(named >= 7, "\(named) units name the spool")
        let path = try String(contentsOfFile: units + "/courier.path", encoding: .utf8)
        #expect(path.contains("PathChanged=/srv/courier/queued"))
        let written = try String(contentsOfFile: elsewhere.path + "/etc/courier/courier.conf", encoding: .utf8)
        #expect(written.contains("spool = /srv/courier\n"))
    }

    @Test("every service that runs courier may write the spool and node_exporter's textfile directory, no more")
    func everyServiceMayWriteTheMetricsFile() throws {
        let folder = Shell.repository + "/etc/systemd"
        let services = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".service") }
        #expect(services.count >= 5, "\(services)")
        for name in services {
            let text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            guard text.contains("ExecStart=") else { continue }
            let writable = text.split(separator: "\n").filter { $0.hasPrefix("ReadWritePaths=") }.map(String.init)
            #expect(
                writable == ["ReadWritePaths=/var/spool/courier", "ReadWritePaths=-/var/lib/prometheus/node-exporter"],
                "\(name): \(writable)")
            #expect(text.contains("ProtectSystem=strict"), "\(name)")
        }
    }

    @Test(.needs("make", "systemd-analyze")) func systemdAnalyzeVerifiesEveryUnit() throws {
        let root = TemporaryDirectory("verify")
        #expect(try Self.install(into: root.path).status == 0)
        // The installed units, beside the host's own (sysinit.target, …).
        let units = root.path + "/usr/lib/systemd/system"
        for host in ["/lib/systemd/system", "/usr/lib/systemd/system"]
        where FileManager.default.fileExists(atPath: host) {
            try Shell.run(["cp", "-an", host + "/.", units + "/"])
        }
        // Every unit the repository ships (templates are checked as an
        // instance of themselves), so a new one is covered without a word here.
        let names = try FileManager.default.contentsOfDirectory(atPath: Shell.repository + "/etc/systemd").sorted()
        for shipped in ["courier.service", "courier-shared.timer", "courier@.service", "courier@.timer"] {
            #expect(names.contains(shipped), "\(shipped)")
        }
        for name in names {
            #expect(FileManager.default.fileExists(atPath: units + "/" + name), "make install leaves out \(name)")
        }
        let result = try Shell.run(
            ["systemd-analyze", "verify", "--root=\(root.path)", "--man=no"] + names.map { units + "/" + $0 })
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.isEmpty, "\(result.output)")
    }

    @Test(.needs("groff", "man")) func manPagesRenderCleanly() throws {
        for page in ["man/courier.1", "man/courier.conf.5"] {
            let groff = try Shell.run(["groff", "-ww", "-z", "-man", page])
            #expect(groff.status == 0 && groff.output.isEmpty, "\(page): \(groff.output)")
            let rendered = try Shell.run(
                ["man", "-l", page], environment: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
            #expect(rendered.status == 0 && rendered.output.contains("SEE ALSO"), "\(page)")
        }
    }

    @Test("courier(1) lists exactly the table's commands, each with the table's usage, and every global option")
    func theManPageAgreesWithTheCommandTable() throws {
        let manual = ManPage(source: try String(contentsOfFile: Shell.repository + "/man/courier.1", encoding: .utf8))
        let entries = manual.entries(in: "COMMANDS")
        let groups = Set(CommandTable.commands.filter { !$0.subcommands.isEmpty }.map(\.name))
        // A group's entries are tagged with two words: `catalog sync`.
        func name(_ entry: ManPage.Entry) -> String {
            let words = entry.tag.split(separator: " ")
            return (groups.contains(String(words.first ?? "")) ? words.prefix(2) : words.prefix(1)).joined(
                separator: " ")
        }
        let documented = Dictionary(entries.map { (name($0), $0) }, uniquingKeysWith: { first, _ in first })
        #expect(documented.count == entries.count, "a command is documented twice")
        let declared = Dictionary(uniqueKeysWithValues: CommandTableTests.paths)
        for (command, entry) in documented where declared[command] == nil {
            Issue.record("courier.1 documents \(command) (\(entry.tag)), which the table does not declare")
        }
        for (command, declaration) in CommandTableTests.paths {
            guard let entry = documented[command] else {
                Issue.record("courier.1 lacks \(command)")
                continue
            }
            let usage = HelpText.usageLine(command, declaration).dropFirst("courier ".count)
            #expect(entry.tag == usage, "courier.1 has `\(entry.tag)` where the table says `\(usage)`")
            for option in declaration.options { #expect(entry.text.contains(option.name), "\(command) \(option.name)") }
        }
        let options = manual.entries(in: "OPTIONS").map(\.tag)
        for option in CommandTable.globalOptions {
            #expect(options.contains { $0.hasPrefix(option.label) }, "courier.1 OPTIONS lacks \(option.label)")
        }
        #expect(options.count == CommandTable.globalOptions.count, "\(options)")
        let synopsis = manual.section("SYNOPSIS").map { ManPage.plain($0) }.joined(separator: " ")
        #expect(synopsis.contains("[--]"), "the synopsis shows where options end: \(synopsis)")
    }

    /// scripts/build-deb.sh, which builds its static binary itself (minutes
    /// the first time, seconds after); the .deb's path.
    static func buildDeb(into directory: String) throws -> String {
        let built = try Shell.run(["scripts/build-deb.sh"], environment: ["OUTDIR": directory])
        try #require(built.status == 0, "\(built.output)")
        return try #require(built.output.split(separator: "\n").last.map(String.init), "\(built.output)")
    }

    @Test(
        "the .deb's courier needs no Swift toolchain: readelf -d shows no Swift library and no RUNPATH",
        .needs("make", "dpkg-deb", "readelf"))
    func theDebPackagesAStaticBinary() throws {
        let out = TemporaryDirectory("deb")
        let deb = try Self.buildDeb(into: out.path)
        let contents = TemporaryDirectory("deb-contents")
        #expect(try Shell.run(["dpkg-deb", "-x", deb, contents.path]).status == 0)
        let dynamic = try Shell.run(["readelf", "-d", contents.path + "/usr/bin/courier"])
        #expect(dynamic.status == 0, "\(dynamic.output)")
        let needed = dynamic.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("[libc.so.6]") }, "\(dynamic.output)")
        for line in needed {
            for toolchain in ["libswift", "libFoundation", "libdispatch", "libBlocksRuntime"] {
                #expect(!line.contains("[" + toolchain), "the package's courier needs the toolchain's \(line)")
            }
        }
        for line in dynamic.output.split(separator: "\n") {
            #expect(!line.contains("(RUNPATH)") && !line.contains("(RPATH)"), "\(line)")
        }
        // And it runs without the toolchain on the library path.
        let version = try Shell.run(
            ["sh", "-c", "LD_LIBRARY_PATH= \(contents.path)/usr/bin/courier --version"],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(version.output == "courier \(CourierVersion.current)\n", "\(version.output)")
    }

    @Test(.needs("make", "dpkg", "dpkg-deb")) func theDebPackageHasTheLayoutAndScripts() throws {
        let out = TemporaryDirectory("deb")
        let deb = try Self.buildDeb(into: out.path)
        let info = try Shell.run(["dpkg-deb", "--info", deb]).output
        for field in [
            "Package: courier", "Version: \(CourierVersion.current)",
            "Depends: libc6, libcurl4, libinih1, libssl3, zlib1g, libstdc++6, libgcc-s1, adduser",
            "postinst", "conffiles",
        ] {
            #expect(info.contains(field), "\(field)")
        }
        let contents = try Shell.run(["dpkg-deb", "-c", deb]).output
        for path in [
            "./usr/bin/courier", "./lib/systemd/system/courier.service", "./etc/courier/courier.conf",
            "./usr/share/man/man1/courier.1.gz", "./usr/share/man/man5/courier.conf.5.gz",
            // The README's links into docs/ resolve in the package too.
            "./usr/share/doc/courier/README.md", "./usr/share/doc/courier/docs/sync.md",
        ] {
            #expect(contents.contains(path), "\(path)")
        }
        #expect(contents.contains("drwxr-xr-x root/root         0"))
        // prerm stops every timer and path unit the package ships.
        let control = TemporaryDirectory("control")
        #expect(try Shell.run(["dpkg-deb", "-e", deb, control.path + "/DEBIAN"]).status == 0)
        let prerm = try String(contentsOfFile: control.path + "/DEBIAN/prerm", encoding: .utf8)
        let shipped = try FileManager.default.contentsOfDirectory(atPath: Shell.repository + "/etc/systemd")
            .filter { $0.hasSuffix(".timer") || $0.hasSuffix(".path") }
        #expect(!shipped.isEmpty)
        // A template's instances, by the pattern systemctl matches them with.
        for unit in shipped {
            let stopped = unit.replacingOccurrences(of: "@.", with: "@*.")
            #expect(prerm.contains(stopped), "prerm leaves \(stopped) running")
        }
    }

    /// The real thing, on CI's throwaway machine only: install the .deb, check
    /// the units against the installed binary and man pages, and run a round
    /// the way the service does (as the courier user, umask 0027). It changes
    /// the machine (a package, a user, /var/spool/courier), so it is the one
    /// test that asks for a machine rather than for tools.
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["CI"] == "true" && getuid() == 0
                && ProcessInfo.processInfo.environment["COURIER_SANITIZED"] == nil,
            "installs a package and adds a user: only as root on CI (CI=true), not under a sanitizer"),
        .needs("make", "dpkg", "dpkg-deb", "systemd-analyze", "runuser"))
    func aRealInstallRunsARoundAsTheCourierUser() throws {
        let out = TemporaryDirectory("deb")
        let deb = try Self.buildDeb(into: out.path)
        let installed = try Shell.run(["dpkg", "-i", deb])
        #expect(installed.status == 0, "\(installed.output)")
        defer { _ = try? Shell.run(["dpkg", "-r", "courier"]) }

        let verify = try Shell.run(["sh", "-c", "systemd-analyze verify etc/systemd/*"])
        #expect(verify.status == 0 && verify.output.isEmpty, "\(verify.output)")

        let server = try LoopbackServer(status: 201)
        let work = TemporaryDirectory("service")
        chmod(work.path, 0o755)
        try work.write(
            "[courier]\nspool = /var/spool/courier\n[subscriber alpha]\nurl = \(server.url)\n", to: "courier.conf")
        chmod(work.path + "/courier.conf", 0o644)
        try Data(#"{"id":"svc-1","kind":"sleep"}"#.utf8).write(
            to: URL(fileURLWithPath: "/var/spool/courier/queued/svc.json"))
        // A file the courier user may not read (root's, mode 0600): flagged, never a blocked round.
        try Data(#"{"id":"svc-secret","kind":"sleep"}"#.utf8).write(
            to: URL(fileURLWithPath: "/var/spool/courier/queued/private.json"))
        chmod("/var/spool/courier/queued/private.json", 0o600)
        let round = try Shell.run([
            "runuser", "-u", "courier", "--", "sh", "-c",
            "umask 0027 && COURIER_CONFIG=\(work.path)/courier.conf /usr/bin/courier run",
        ])
        #expect(round.status == 0, "\(round.output)")
        #expect(FileManager.default.fileExists(atPath: "/var/spool/courier/sent/svc-1@alpha.json"))
        // What courier writes is the courier user's, and closed to others
        // (UMask=0027). A dropped file keeps its writer's owner and mode: it
        // is renamed, not copied, and the spool itself is 0750.
        let ledger = "/var/spool/courier/ledger/\(Timestamp.now().utcDay).tsv"
        let attributes = try FileManager.default.attributesOfItem(atPath: ledger)
        #expect(attributes[.ownerAccountName] as? String == "courier")
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o027 } == 0)
        // Open to the producers' group in tmp/ and queued/ only (init --group).
        let spoolMode =
            try FileManager.default.attributesOfItem(atPath: "/var/spool/courier")[.posixPermissions] as? Int
        #expect(spoolMode == 0o751)
        for folder in ["tmp", "queued"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: "/var/spool/courier/" + folder)
            #expect(attributes[.groupOwnerAccountName] as? String == "courier-producers", "\(folder)")
            #expect(attributes[.posixPermissions] as? Int == 0o3770, "\(folder)")
        }
        let sentMode =
            try FileManager.default.attributesOfItem(atPath: "/var/spool/courier/sent")[.posixPermissions] as? Int
        #expect(sentMode == 0o750)
        let config = try FileManager.default.attributesOfItem(atPath: "/etc/courier/courier.conf")
        #expect(config[.groupOwnerAccountName] as? String == "courier-producers")
        #expect(server.requests.count == 1)
        let flagged = try FileManager.default.contentsOfDirectory(atPath: "/var/spool/courier/needsAttention")
            .filter { $0.hasSuffix("-private.json") }
        #expect(flagged.count == 1, "\(round.output)")
        let ledgerText = try String(contentsOfFile: ledger, encoding: .utf8)
        #expect(ledgerText.contains("unreadable: Permission denied (dropped as private.json)"))
        try? FileManager.default.removeItem(atPath: "/var/spool/courier/sent/svc-1@alpha.json")
        for name in flagged { try? FileManager.default.removeItem(atPath: "/var/spool/courier/needsAttention/" + name) }
    }
}

extension String {
    func appendingTo(_ path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(utf8))
        try handle.close()
    }
}
