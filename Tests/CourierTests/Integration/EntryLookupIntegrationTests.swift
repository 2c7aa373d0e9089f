import CourierIdentifiers
import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// EntryLookupTests at scale and through a round against a real subscriber on loopback.
@Suite(.tags(.integration)) struct EntryLookupIntegrationTests {
    @Test("a listing of queued/ taken while a stream of it runs does not cut that stream short")
    func twoStreamsOfOneFolderAreIndependent() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        for index in 0..<2000 { try spool.drop("x", as: "drop-\(index).json") }
        let queued = spool.spool.directory(.queued)
        let pass = try queued.entries()
        var seen = 0
        while seen < 10, try pass.next() != nil { seen += 1 }
        var listed: [UInt64] = []
        try queued.entries().fingerprints(into: &listed)
        #expect(listed.count == 2000)
        while try pass.next() != nil { seen += 1 }
        #expect(seen == 2000, "the pass's stream saw \(seen) of 2,000 names")
    }

    @Test("a round that lists still finds the duplicate and the conflicting id among hundreds of new records")
    func aListingRoundKeepsTheDuplicateCheck() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        try spool.spool.deliverNewFile(
            EntryLookupTests.record("same"), named: EntryLookupTests.entry("same"), into: .sent)
        try spool.spool.deliverNewFile(
            EntryLookupTests.record("other"), named: EntryLookupTests.entry("other"), into: .failed)
        for index in 0..<300 { try spool.dropRecord(id: "n\(index)") }
        try spool.drop(String(decoding: EntryLookupTests.record("same"), as: UTF8.self), as: "z-same.json")
        try spool.drop(#"{"id":"other","kind":"sleep","changed":true}"#, as: "z-other.json")
        let summary = try spool.runRound()
        #expect(summary.sent == 300)
        #expect(summary.duplicates == 1)
        #expect(try spool.names(in: .failed) == ["other@alpha.json"])
        let conflicts = try spool.ledger().filter { $0.event == .invalid }.map(\.detail)
        #expect(
            conflicts.count == 1 && conflicts[0].contains("already used by failed/other@alpha.json"), "\(conflicts)")
    }
}
