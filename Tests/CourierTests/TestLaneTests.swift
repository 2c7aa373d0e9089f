import Foundation
import Testing

/// The two lanes of the suite. Swift Testing on this toolchain filters by
/// a test's ID, not by its tags, and the ID of every test ends with its
/// file's name; so an integration test is one in a file named
/// `…IntegrationTests.swift` under `Integration/`, every suite there carries
/// the `.integration` tag, and `swift test --skip IntegrationTests` runs the
/// rest, the unit lane (README, "Tests"). These checks keep the name, the
/// folder and the tag saying the same thing.
@Suite struct TestLaneTests {
    static let tests = Shell.repository + "/Tests/CourierTests"

    /// Every Swift file of the test target, by its path from there.
    static func testFiles() -> [String] {
        (FileManager.default.enumerator(atPath: tests)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".swift") }.sorted()
    }

    @Test("a test file is in Integration/ exactly when its name says IntegrationTests, so the skip takes just those")
    func theFolderAndTheNameAgree() throws {
        let files = Self.testFiles()
        #expect(files.contains { $0.hasPrefix("Integration/") }, "found the test files in \(Self.tests)")
        for file in files {
            let named = (file as NSString).lastPathComponent.hasSuffix("IntegrationTests.swift")
            #expect(named == file.hasPrefix("Integration/"), "\(file)")
        }
    }

    @Test("every suite in Integration/ carries the integration tag, and no test outside it does")
    func theTagAndTheFolderAgree() throws {
        for file in Self.testFiles() where !file.hasPrefix("Support/") && file != "TestLaneTests.swift" {
            let text = try String(contentsOfFile: Self.tests + "/" + file, encoding: .utf8)
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            if file.hasPrefix("Integration/") {
                let suites = lines.filter { $0.hasPrefix("@Suite") }
                #expect(!suites.isEmpty, "\(file) declares a suite")
                for suite in suites { #expect(suite.contains(".tags(.integration)"), "\(file): \(suite)") }
            } else {
                #expect(!text.contains(".tags(.integration)"), "\(file) tags a test integration outside Integration/")
            }
        }
    }

    @Test("the README gives the command of each lane")
    func theReadmeSaysHowToRunEachLane() throws {
        let readme = try String(contentsOfFile: Shell.repository + "/README.md", encoding: .utf8)
        #expect(readme.contains("swift test --skip IntegrationTests"))
        #expect(readme.contains("swift test --filter IntegrationTests"))
    }
}
