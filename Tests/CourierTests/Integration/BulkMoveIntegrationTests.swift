import Foundation
import Glibc
import Testing

@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierSpool
@testable import CourierSupport

/// BulkMoveTests through the built courier binary.
@Suite(.tags(.integration)) struct BulkMoveIntegrationTests {
    @Test("with the binary: names from standard input, exit 65 and a summary when some did not move, JSON results")
    func bulkMovesFromTheCommandLine() throws {
        let spool = try BulkMoveTests.spool(BulkMoveTests.mixed)
        let binary = try CourierBinary.locate()
        let bare = try binary.run(["--spool", spool.path, "resend"])
        #expect(bare.status == 64, "a bare resend moves nothing: \(bare.error)")

        let partly = try binary.run(["--spool", spool.path, "resend", "-"], input: "a-1@alpha\nmissing@alpha\n")
        #expect(partly.status == 65, "\(partly.error)")
        #expect(partly.output == "needsAttention/a-1@alpha.json -> queued/\nresent: 1\n")
        #expect(partly.error.contains("not moved: missing@alpha"))
        #expect(partly.error.contains("resend: 1 moved, 1 not"))

        let deleted = try binary.run(["--spool", spool.path, "delete", "--state", "failed", "--json"])
        #expect(deleted.status == 0, "\(deleted.error)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(deleted.output.utf8)) as? [String: Any])
        let moved = try #require(object["moved"] as? [[String: Any]])
        #expect(moved.count == 1 && moved.first?["entry"] as? String == "a-3@alpha.json")
        #expect(moved.first?["to"] is NSNull && moved.first?["from"] as? String == "failed")
        #expect(!deleted.output.contains("\\/"), "no escaped slashes")

        let wrong = try binary.run(["--spool", spool.path, "ack", "--state", "sent"])
        #expect(wrong.status == 64 && wrong.error.contains("ack takes needsAttention"), "\(wrong.error)")
    }

    @Test(
        "names from an empty standard input pick nothing, even with a filter: delete - --state failed deletes no item")
    func anEmptyStandardInputPicksNothing() throws {
        let spool = try BulkMoveTests.spool(BulkMoveTests.mixed)
        let binary = try CourierBinary.locate()
        let filtered = try binary.run(["--spool", spool.path, "delete", "-", "--state", "failed"], input: "")
        #expect(filtered.status == 0, "\(filtered.error)")
        #expect(try spool.names(in: .failed) == ["a-3@alpha.json"], "the filter narrows names; it found none")

        let everything = try binary.run(["--spool", spool.path, "ack", "-", "--all"], input: "\n")
        #expect(everything.status == 64, "--all with names is refused: \(everything.error)")
        #expect(try spool.names(in: .needsAttention).count == 3)
    }
}
