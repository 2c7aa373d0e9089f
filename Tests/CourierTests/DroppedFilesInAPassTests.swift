import Foundation
import Glibc
import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// Thousands of dropped files taken in by a delivery pass, with repeats and
/// conflicts among them. (Written by an attack on a reader that read dropped
/// files ahead on a thread of its own, which was not kept: docs/decisions.md.)
@Suite struct DroppedFilesInAPassTests {
    @Test("a pass over 3,000 files takes each record once, a repeat as a duplicate, a conflict as one")
    func aPassKeepsTheDuplicateCheckOverThousandsOfFiles() throws {
        let spool = try TemporarySpool.withUnreachableAlpha()
        for index in 0..<1500 {
            let id = String(format: "d%04d", index)
            try spool.drop(#"{"id":"\#(id)","kind":"sleep"}"#, as: "\(id).json")
            let again = index < 1000 ? #"{"id":"\#(id)","kind":"sleep"}"# : #"{"id":"\#(id)","kind":"sleep","x":1}"#
            try spool.drop(again, as: "\(index < 1000 ? "copy" : "other")-\(id).json")
        }
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        let ledger = try spool.ledger()
        let accepted = ledger.filter { $0.event == .accepted }.map(\.key)
        #expect(accepted.count == 1500 && Set(accepted).count == 1500)
        #expect(summary.sent == 1500 && transport.started.count == 1500)
        #expect(ledger.filter { $0.event == .duplicate }.count == 1000)
        #expect(ledger.filter { $0.event == .invalid }.count == 500)
        #expect(try spool.names(in: .queued).isEmpty)
    }
}
