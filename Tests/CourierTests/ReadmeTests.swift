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
