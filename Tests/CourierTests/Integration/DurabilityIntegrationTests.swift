import Foundation
import Glibc
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// DurabilityTests against a real subscriber on loopback, and at the scale of a full group.
@Suite(.tags(.integration)) struct DurabilityIntegrationTests {
    @Test("a dropped file is fsynced before its entry or its ledger line exists")
    func aDroppedFileIsSyncedBeforeItIsAccepted() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        spool.companions.append(server)
        try spool.dropRecord(id: "d1")
        // The first fsync of the round must be the dropped file's own.
        spool.session.faults = FaultPlan(failing: .sync, at: 1, with: Errno(EIO))
        #expect(throws: RoundError.self) { try spool.runRound() }
        #expect(try spool.names(in: .queued) == ["d1.json"], "still under the name it was dropped as")
        #expect(try spool.ledger().isEmpty, "no `accepted` line for bytes that may not be on disk")
        spool.session.faults = nil
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["d1@alpha.json"])
    }

    @Test("intake commits a group once it holds max-group bytes, whatever the count")
    func intakeGroupsAreBoundedByBytes() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        spool.companions.append(server)
        spool.configuration.maxRecordSize = 2 << 20
        let pad = String(repeating: "p", count: 1 << 20)
        for index in 0..<12 { try spool.dropRecord(id: "big-\(index)", extra: #","pad":"\#(pad)""#) }
        let counter = FaultPlan()
        spool.session.faults = counter
        let report = try Intake(
            session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())
        )
        .run()
        #expect(report.accepted == 12)
        // One directory fsync per group: 12 MiB in groups of at most 4 MiB.
        #expect(report.groups >= 3, "\(report.groups) groups")
    }
}
