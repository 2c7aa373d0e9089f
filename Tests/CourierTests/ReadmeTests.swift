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
