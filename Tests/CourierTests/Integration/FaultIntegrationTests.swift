import Foundation
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

/// Faults at the syscall seam: every rename, write and fsync of a round
/// fails in turn (ENOSPC, EIO, EXDEV); after a clean round the spool is
/// legal and every record is delivered.
@Suite(.tags(.integration)) struct FaultTests {
    static let records = 6

    static func spool(server: LoopbackServer) throws -> TemporarySpool {
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url),
            TemporarySpool.subscriber("beta", url: server.url, kinds: ["sleep"]),
        ])
        for index in 0..<records { try spool.dropRecord(id: "f-\(index)", kind: index % 2 == 0 ? "sleep" : "note") }
        try spool.drop("{not json", as: "broken.json")
        try spool.spool.deliverNewFile(
            Array(#"{"id":"r-1","kind":"sleep"}"#.utf8), named: FileName("r-1@alpha.json"), into: .sending)
        return spool
    }

    /// The promises, checked after the storm.
    static func expectLegal(_ spool: TemporarySpool, _ label: String) throws {
        let placements = try spool.placements()
        #expect(placements.values.allSatisfy { $0.count == 1 }, "\(label): an item in two states: \(placements)")
        let sent = try spool.names(in: .sent)
        // Even ids go to both (sleep), odd ones to alpha only; r-1 was in flight.
        let expected =
            (0..<records).flatMap {
                $0 % 2 == 0 ? ["f-\($0)@alpha.json", "f-\($0)@beta.json"] : ["f-\($0)@alpha.json"]
            }
            + ["r-1@alpha.json"]
        #expect(Set(sent) == Set(expected), "\(label): sent \(sent)")
        #expect(try spool.names(in: .sending).isEmpty, "\(label)")
        #expect(try spool.names(in: .queued).isEmpty, "\(label)")
        #expect(try spool.names(in: .needsAttention).count == 1, "\(label): the broken file, once")
        #expect(try spool.spool.tmp.sortedNames().isEmpty, "\(label): orphans in tmp/")
    }

    @Test func everyFailingRenameWriteAndSyncLeavesALegalSpool() throws {
        let server = try LoopbackServer(status: 201)
        // First runs that only count what a round does.
        let sweep = try FaultSweep {
            let counting = try Self.spool(server: server)
            let counter = FaultPlan()
            counting.session.faults = counter
            try counting.runRound()
            try Self.expectLegal(counting, "no fault")
            return counter.counts
        }
        let counts = sweep.least
        #expect((counts[.rename] ?? 0) >= 10 && (counts[.write] ?? 0) >= 3 && (counts[.sync] ?? 0) >= 5, "\(counts)")

        var failedRounds = 0
        for operation in FaultPlan.Operation.allCases {
            let errors: [Errno] = operation == .rename ? [.noSpace, Errno(EIO), .crossDevice] : [.noSpace, Errno(EIO)]
            for error in errors {
                for occurrence in sweep.occurrences(of: operation) {
                    let label = "\(operation) #\(occurrence) fails with \(error)"
                    guard
                        let (spool, outcome) = try sweep.reachFailing(
                            label, operation, occurrence, with: error, spool: { try Self.spool(server: server) },
                            run: { try $0.runRound() })
                    else { continue }
                    // Every fault is reported: a round that goes on as if the
                    // disk had taken the rename, write or fsync has ignored an
                    // error (the promise the sweep is there to keep).
                    switch outcome {
                    case .success:
                        Issue.record("\(label): the round finished as if nothing had failed")
                    case .failure(let error):
                        failedRounds += 1
                        #expect("\(error)".contains("unable to"), "\(label): \(error)")
                    }
                    // The fault has passed (the disk has room again): rounds finish the work.
                    spool.session.faults = nil
                    try spool.runRound()
                    try Self.expectLegal(spool, label)
                }
            }
        }
        print(
            "fault sweep: \(counts[.rename] ?? 0) renames, \(counts[.write] ?? 0) writes, \(counts[.sync] ?? 0) fsyncs per round "
                + "(at most \(sweep.most[.rename] ?? 0), \(sweep.most[.write] ?? 0), \(sweep.most[.sync] ?? 0)); "
                + "\(failedRounds) faulted rounds failed cleanly, every one followed by a legal spool")
    }

    /// The sweep over a round that defers: a deferral's ledger line, its
    /// new time and its rename back to queued/ can each fail; afterwards
    /// every deferred entry is in queued/ exactly once, with its next
    /// attempt ahead of it, and no entry needs attention for the fault.
    @Test("every failing rename, write and fsync of a round that defers leaves each entry deferred once or sent")
    func faultsWhileDeferring() throws {
        let server = try LoopbackServer { request, _ in
            .respond(.json(request.header("idempotency-key")?.hasPrefix("busy") == true ? 503 : 201, "{}"))
        }
        func spool() throws -> TemporarySpool {
            var alpha = try TemporarySpool.subscriber("alpha", url: server.url)
            alpha.retrySchedule = [.seconds(3600)]
            let spool = try TemporarySpool(subscribers: [alpha])
            for index in 0..<4 { try spool.dropRecord(id: (index % 2 == 0 ? "busy-" : "fine-") + "\(index)") }
            return spool
        }
        func expectDeferredOnce(_ spool: TemporarySpool, _ label: String) throws {
            #expect(try spool.placements().values.allSatisfy { $0.count == 1 }, "\(label)")
            #expect(try spool.names(in: .sent) == ["fine-1@alpha.json", "fine-3@alpha.json"], "\(label)")
            #expect(try spool.names(in: .queued) == ["busy-0@alpha.json", "busy-2@alpha.json"], "\(label)")
            for name in try spool.names(in: .queued) {
                let status = try #require(try spool.spool.directory(.queued).status(of: FileName(name)))
                let stamp = DeferralStamp(modified: status.modified)
                #expect(
                    stamp?.deferrals == 1 && (stamp?.due ?? .now()) > .now(),
                    "\(label): \(name) \(String(describing: stamp))")
            }
            #expect(try spool.names(in: .needsAttention).isEmpty && spool.names(in: .sending).isEmpty, "\(label)")
        }
        let sweep = try FaultSweep {
            let counting = try spool()
            let counter = FaultPlan()
            counting.session.faults = counter
            try counting.runRound()
            try expectDeferredOnce(counting, "no fault")
            return counter.counts
        }
        for operation in FaultPlan.Operation.allCases {
            for occurrence in sweep.occurrences(of: operation) {
                let label = "\(operation) #\(occurrence) fails"
                guard
                    let (faulted, outcome) = try sweep.reachFailing(
                        label, operation, occurrence, with: .noSpace, spool: spool, run: { try $0.runRound() })
                else { continue }
                #expect(throws: (any Error).self, "\(label)") { try outcome.get() }
                faulted.session.faults = nil
                try faulted.runRound()
                try expectDeferredOnce(faulted, label)
            }
        }
    }

    @Test func crossDeviceRenamesSayWhatIsWrong() {
        let error = SpoolError.rename(from: "queued/a", to: "sent/a", .crossDevice)
        #expect(error.description.contains("on different file systems"))
    }
}
