import Foundation
import Glibc
import Testing

/// The README's quick start, as a person on a fresh machine meets it.
@Suite struct ReadmeTests {
    /// The first command of the README's first `sh` block, comments and
    /// blank lines aside.
    static func firstCommand() throws -> String {
        let readme = try String(contentsOfFile: Shell.repository + "/README.md", encoding: .utf8)
        let block = try #require(readme.components(separatedBy: "```sh\n").dropFirst().first)
        let lines = block.components(separatedBy: "```").first?.split(separator: "\n") ?? []
        return String(
            try #require(lines.first { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }))
    }

    @Test("the README's first command works as root on a fresh Debian 12: apt-get update first, no sudo")
    func firstCommandWorksOnAFreshDebian() throws {
        let command = try Self.firstCommand()
        let update = try #require(command.range(of: "apt-get update"), "\(command)")
        let install = try #require(command.range(of: "apt-get install -y"), "\(command)")
        #expect(update.upperBound <= install.lowerBound)
        #expect(!command.contains("sudo"))
    }

    /// The packages an `apt-get install` line names: `line` and the lines
    /// it continues with `\\`, options aside.
    static func packages(installedBy text: String, after marker: String) throws -> [String] {
        let install = try #require(text.range(of: marker), "no `\(marker)`")
        var packages: [String] = []
        for line in text[install.upperBound...].split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            packages += words.prefix { $0 != "&&" }.filter { $0 != "\\" && !$0.hasPrefix("-") }
            if !line.hasSuffix("\\") { break }
        }
        return packages
    }

    /// scripts/test-packages.txt: each package with the programs (or files)
    /// the tests use from it.
    static func testPackages() throws -> [String: [String]] {
        let list = try String(contentsOfFile: Shell.repository + "/scripts/test-packages.txt", encoding: .utf8)
        var packages: [String: [String]] = [:]
        for line in list.split(separator: "\n") {
            let words = line.prefix { $0 != "#" }.split(separator: " ").map(String.init)
            guard let package = words.first else { continue }
            packages[package] = Array(words.dropFirst())
        }
        return packages
    }

    @Test("the README's first command installs the build's packages, as CI does, and none only the tests need")
    func firstCommandInstallsWhatTheBuildNeeds() throws {
        let readme = try Self.packages(installedBy: try Self.firstCommand(), after: "apt-get install -y")
        let ci = try String(contentsOfFile: Shell.repository + "/.ci/run", encoding: .utf8)
        let build = try Self.packages(installedBy: ci, after: "apt-get install -y --no-install-recommends \\\n")
        #expect(Set(readme) == Set(build), "README: \(readme), .ci/run: \(build)")
        // Every system library the manifest names comes with it.
        let manifest = try String(contentsOfFile: Shell.repository + "/Package.swift", encoding: .utf8)
        let providers = manifest.components(separatedBy: ".apt([\"").dropFirst().compactMap {
            $0.split(separator: "\"").first.map(String.init)
        }
        #expect(providers.count == 3, "\(providers)")
        // CCurl loads libcurl at run time (dlopen) but compiles against its headers.
        for provider in providers + ["libcurl4-openssl-dev"] {
            #expect(readme.contains(provider), "the README's first command lacks \(provider)")
        }
        let tests = try Self.testPackages()
        for package in readme { #expect(tests[package] == nil, "\(package) is in both lists") }
        #expect(!readme.contains("prometheus") && !readme.contains("glusterfs-server"))
    }

    @Test("scripts/test and .ci/run install the tests' packages from one list, which has every tool a test needs")
    func theTestPackagesAreListedOnce() throws {
        let tests = try Self.testPackages()
        let ci = try String(contentsOfFile: Shell.repository + "/.ci/run", encoding: .utf8)
        let script = try String(contentsOfFile: Shell.repository + "/scripts/test", encoding: .utf8)
        #expect(ci.contains("scripts/test-packages.txt") && script.contains("scripts/test-packages.txt"))
        // Every program a test asks for by `.needs(…)`, and every package a
        // file comes from, is on the list (dpkg's, util-linux's and
        // bsdutils' `script` are on every Debian system: all Essential).
        let listed = Set(tests.values.joined()).union(tests.keys)
        // binutils' come with the build (the README's first command).
        let everywhere: Set<String> = [
            "dpkg", "dpkg-deb", "runuser", "useradd", "userdel", "groupadd", "groupdel", "readelf", "strip",
            "script",
        ]
        var asked: [String] = []
        let folder = Shell.repository + "/Tests/CourierTests"
        for file in FileManager.default.enumerator(atPath: folder)?.compactMap({ $0 as? String }) ?? []
        where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            for call in text.components(separatedBy: ".needs(").dropFirst() {
                let arguments = call.prefix { $0 != ")" }
                let quoted = arguments.components(separatedBy: "\"").enumerated().filter { $0.offset % 2 == 1 }
                let words = quoted.map(\.element).filter { !$0.isEmpty }
                // .needs(file: PATH, from: PACKAGE) names its package last.
                asked += arguments.hasPrefix("file:") ? Array(words.suffix(1)) : words
            }
        }
        #expect(asked.count >= 10, "\(asked)")
        for program in asked where !everywhere.contains(program) {
            #expect(listed.contains(program), "a test needs \(program), which scripts/test-packages.txt does not list")
        }
        // The power-loss sweep's packages.
        for package in [
            "xfsprogs", "btrfs-progs", "fuse3", "g++", "cmake", "libfuse3-dev", "libspdlog-dev", "libtoml11-dev",
        ] {
            #expect(tests[package] != nil, "\(package)")
        }
    }
}

/// The README's "first fifteen minutes", run as written: a scratch spool,
/// the reference sink on loopback, a subscriber that goes down and comes
/// back.
@Suite(.tags(.integration)) struct ReadmeWalkTests {
    /// The first `sh` block under the heading `title`.
    static func block(under title: String) throws -> String {
        let readme = try String(contentsOfFile: Shell.repository + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## \(title)\n").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```sh\n").dropFirst().first)
        return try #require(block.components(separatedBy: "\n```").first)
    }

    @Test("the README's first fifteen minutes run as written and end with every record delivered")
    func theFirstFifteenMinutesRunAsWritten() throws {
        let written = try Self.block(under: "The first fifteen minutes")
        #expect(written.contains("127.0.0.1:8080"))
        // Another process may hold 8080 here: the same walk on a port no
        // one listens on.
        let port = try RefusingPort().port
        let script = written.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
        let place = TemporaryDirectory("readme")
        // The walk starts in the repository, after the quick start's build.
        try FileManager.default.createDirectory(
            atPath: place.path + "/repository/.build/release", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: place.path + "/repository/.build/release/courier", withDestinationPath: CourierBinary.locate().path)
        try FileManager.default.createDirectory(atPath: place.path + "/tmp", withIntermediateDirectories: true)
        // A sink the walk leaves behind when it fails half way is stopped.
        let guarded = "trap 'kill $(jobs -p) 2>/dev/null' EXIT\n" + script
        let result = try Shell.run(
            ["bash", "-c", guarded], environment: ["TMPDIR": place.path + "/tmp", "COURIER_CONFIG": ""],
            in: place.path + "/repository")
        #expect(result.status == 0, "\(result.output)")
        let scratch = try #require(try FileManager.default.contentsOfDirectory(atPath: place.path + "/tmp").first)
        let root = place.path + "/tmp/" + scratch
        let stored = try FileManager.default.contentsOfDirectory(atPath: root + "/inbox/new").sorted()
        #expect(stored == ["w-1.json", "w-2.json", "w-3.json"], "\(result.output)")
        let sent = try FileManager.default.contentsOfDirectory(atPath: root + "/spool/sent").sorted()
        #expect(sent == ["w-1@alpha.json", "w-2@alpha.json", "w-3@alpha.json"])
        for said in [
            "needsAttention w-2@alpha", "w-2@alpha.json is in needsAttention/", "alpha held: 1 left queued",
            "needsAttention/w-2@alpha.json -> queued/", "2 sent, 0 need attention", "\tw-2\tresent\t",
            #"courier_items{state="sent",subscriber="alpha"} 3"#,
        ] {
            #expect(result.output.contains(said), "“\(said)” not in: \(result.output)")
        }
    }
}

/// The README's second command, `scripts/test`, on a machine that lacks a
/// package the tests need.
@Suite(.tags(.integration)) struct TestCommandTests {
    @Test("scripts/test run by a user who cannot install names each missing package and its programs, and stops")
    func scriptsTestNamesWhatIsMissing() throws {
        let copy = TemporaryDirectory("test-command")
        chmod(copy.path, 0o755)
        try FileManager.default.createDirectory(atPath: copy.path + "/scripts", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Shell.repository + "/scripts/test", toPath: copy.path + "/scripts/test")
        try copy.write(
            "# a list like the real one\ncoreutils   ls   # here\ncourier-no-such-package   no-such-program /no/such/file\n",
            to: "scripts/test-packages.txt")
        chmod(copy.path + "/scripts", 0o755)
        chmod(copy.path + "/scripts/test-packages.txt", 0o644)
        // As root it would install them: the same run as a user who may not.
        let command = getuid() == 0 ? ["runuser", "-u", "nobody", "--", "scripts/test"] : ["scripts/test"]
        let result = try Shell.run(command, in: copy.path)
        #expect(result.status == 69, "\(result.output)")
        let named = "  courier-no-such-package (no-such-program /no/such/file)\n"
        #expect(result.output.contains(named), "\(result.output)")
        #expect(!result.output.contains("coreutils"), "\(result.output)")
        #expect(result.output.contains("apt-get install -y courier-no-such-package\n"), "\(result.output)")
        #expect(!result.output.contains("swift-format"), "it stops before the lint: \(result.output)")
    }
}
