import Foundation
import Testing

/// What Package.swift cannot say: a target may import any module below it,
/// so the reference receiver could reach courier's own validators through
/// CourierRecords. It is a test oracle and must judge on its own (issue 24).
@Suite struct TargetBoundaryTests {
    @Test("the reference sink imports nothing of courier's delivery side")
    func theSinkStandsApart() throws {
        let folder = Shell.repository + "/Sources/CourierSink"
        let allowed: Set<String> = ["CourierPosix", "CourierSupport", "CourierRecords", "Foundation", "Glibc"]
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10)
        for file in files {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            let imports = text.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count else { return nil }
                return String(words[index + 1])
            }
            for module in imports {
                #expect(allowed.contains(module), "CourierSink/\(file) imports \(module)")
            }
            // Of CourierRecords, only the JSON scanner and its string encoder.
            for word in ["Record.", "RecordProblem", "OutboxFields", "RecordKind", "JSONSplice"] {
                #expect(!text.contains(word), "CourierSink/\(file) uses \(word)")
            }
        }
    }
}
