import Foundation
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

    @Test("the README's first command installs the packages CI installs")
    func firstCommandInstallsWhatCIInstalls() throws {
        let command = try Self.firstCommand()
        let ci = try String(contentsOfFile: Shell.repository + "/.ci/run", encoding: .utf8)
        let install = try #require(ci.range(of: "apt-get install -y --no-install-recommends"))
        // The package list: continued lines up to the first that does not end in `\`.
        var packages: [String] = []
        for line in ci[install.upperBound...].split(separator: "\n") {
            packages += line.split(separator: " ").map(String.init).filter { $0 != "\\" }
            if !line.hasSuffix("\\") { break }
        }
        #expect(packages.count >= 15, "\(packages)")
        let readme = Set(command.split(separator: " ").map(String.init))
        for package in packages { #expect(readme.contains(package), "the README's first command lacks \(package)") }
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
            #"courier_items{state="sent"} 3"#,
        ] {
            #expect(result.output.contains(said), "“\(said)” not in: \(result.output)")
        }
    }
}
