import Foundation
import Glibc
import Testing

extension Tag {
    /// Runs the built `courier` binary or other programs as child processes,
    /// talks HTTP on loopback, or sweeps faults over real spools: slower, and
    /// closer to how a person or systemd uses courier. Every suite in a file
    /// `Integration/…IntegrationTests.swift` carries it; the file's name is
    /// what `swift test --skip IntegrationTests` goes by (`TestLaneTests`).
    @Tag static var integration: Self
}

/// Programs beyond the build packages (dpkg-deb, systemd-analyze, openssl,
/// python3, groff, man, make) that some tests need.
enum Tools {
    /// Set by scripts/test, which CI runs with every package installed: a
    /// missing program then fails the tests that need it instead of
    /// skipping them, so nothing is left out silently.
    static let everyToolRequired = ProcessInfo.processInfo.environment["COURIER_REQUIRE_ALL_TOOLS"] == "1"

    /// Those of `programs` that are not on PATH (or in the sbin folders).
    static func missing(_ programs: [String]) -> [String] { programs.filter { !Shell.exists($0) } }
}

/// A test that needs programs which are not installed, under
/// COURIER_REQUIRE_ALL_TOOLS=1.
struct MissingTools: Error, CustomStringConvertible {
    let programs: [String]

    var description: String {
        "\(programs.joined(separator: ", ")) not installed, and COURIER_REQUIRE_ALL_TOOLS=1 requires every tool"
            + " (.ci/run installs them)"
    }
}

/// A test that must run as root, under COURIER_REQUIRE_ALL_TOOLS=1.
struct NotRoot: Error, CustomStringConvertible {
    let why: String

    var description: String { "not root, and COURIER_REQUIRE_ALL_TOOLS=1 requires every test to run (\(why))" }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where every one of `programs` is installed; on a
    /// laptop with just the build packages it is skipped, saying which
    /// programs it needs. Under COURIER_REQUIRE_ALL_TOOLS=1 a missing
    /// program is a failure instead.
    static func needs(_ programs: String...) -> Self {
        .enabled("needs \(programs.joined(separator: ", ")), not installed") {
            let missing = Tools.missing(programs)
            if missing.isEmpty { return true }
            if Tools.everyToolRequired { throw MissingTools(programs: missing) }
            return false
        }
    }

    /// Runs the test only as root (it adds users and groups, or changes
    /// owners); otherwise it is skipped, saying why. Under
    /// COURIER_REQUIRE_ALL_TOOLS=1 (scripts/test, CI) not being root is a
    /// failure instead, as a missing program is.
    static func asRoot(_ why: String) -> Self {
        .enabled("runs as root only: \(why)") {
            if getuid() == 0 { return true }
            if Tools.everyToolRequired { throw NotRoot(why: why) }
            return false
        }
    }

    /// The same for a package that installs a file rather than a program
    /// (bash-completion's functions).
    static func needs(file path: String, from package: String) -> Self {
        .enabled("needs \(package) (\(path)), not installed") {
            if FileManager.default.fileExists(atPath: path) { return true }
            if Tools.everyToolRequired { throw MissingTools(programs: [package]) }
            return false
        }
    }
}
