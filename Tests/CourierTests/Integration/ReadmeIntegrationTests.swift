import Foundation
import Glibc
import Testing

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
