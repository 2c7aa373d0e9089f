import Foundation
import Testing

/// What Package.swift cannot say: a target may import any module below it,
/// so the reference receiver could reach courier's own validators through
/// CourierRecords. It is a test oracle and must judge on its own (issue 24).
@Suite struct TargetBoundaryTests {
    /// Each Swift file of a target, its text and the modules it imports.
    static func sources(of target: String) throws -> [(file: String, text: String, imports: [String])] {
        let folder = Shell.repository + "/Sources/" + target
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
        return try files.map { file in
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            let imports = text.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count else { return nil }
                return String(words[index + 1])
            }
            return (file, text, imports)
        }
    }

    @Test("the transport knows nothing of the spool: OAuth tokens are kept by CourierTokens through the session")
    func theTransportStandsBelowTheSpool() throws {
        let sources = try Self.sources(of: "CourierTransport")
        #expect(sources.count > 10)
        for (file, _, imports) in sources {
            #expect(!imports.contains("CourierSpool"), "CourierTransport/\(file) imports CourierSpool")
        }
    }

    @Test("the reference sink imports nothing of courier's delivery side")
    func theSinkStandsApart() throws {
        let allowed: Set<String> = ["CourierPosix", "CourierSupport", "CourierRecords", "Foundation", "Glibc"]
        let sources = try Self.sources(of: "CourierSink")
        #expect(sources.count > 10)
        for (file, text, imports) in sources {
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
