import Foundation
import Testing

@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierSupport

/// A shared spool under attack: what another worker holds in its own
/// `sending/WORKER/` is as much the spool's as what is in `queued/`.
@Suite(.tags(.integration)) struct SharedSpoolAttackTests {
    /// A live worker `w2` holding a claim of `x@alpha.json` with `bytes`.
    static func liveClaim(_ spool: TemporarySpool, _ bytes: String) throws -> (Spool, [RoundLock]) {
        let live = try Spool(path: spool.path)
        try live.join(as: WorkerID("w2"))
        try live.deliverNewFile(Array(bytes.utf8), named: FileName("x@alpha.json"), into: .sending)
        return (live, try #require(try live.lockWorkerRound(wait: false)))
    }

    @Test("a dropped record whose id a live worker has claimed with other bytes is flagged, not accepted beside it")
    func anotherWorkersClaimIsAConflict() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        let (live, held) = try Self.liveClaim(spool, #"{"id":"x","kind":"sleep","n":1}"#)
        try spool.drop(#"{"id":"x","kind":"sleep","n":2}"#, as: "x.json")

        let summary = try SharedSpoolTests.round(spool, worker: "w1")
        #expect(server.countsByKey["x"] == nil, "a second body went out under the key w2 is sending")
        #expect(summary.invalid == 1)
        #expect(try spool.names(in: .queued).isEmpty)
        #expect(try live.directory(.sending).sortedNames().map(\.description) == ["x@alpha.json"])
        withExtendedLifetime((live, held)) {}
    }

    @Test("a dropped record a live worker has claimed with the same bytes is a duplicate, not sent again")
    func anotherWorkersClaimIsADuplicate() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        let text = #"{"id":"x","kind":"sleep"}"#
        let (live, held) = try Self.liveClaim(spool, text)
        try spool.drop(text, as: "x.json")

        let summary = try SharedSpoolTests.round(spool, worker: "w1")
        #expect(server.countsByKey["x"] == nil)
        #expect(summary.duplicates == 1)
        #expect(summary.accepted == 0)
        #expect(try spool.names(in: .queued).isEmpty)
        withExtendedLifetime((live, held)) {}
    }

    @Test("a round on a spool no longer shared sends what a worker left in sending/WORKER/, not its folder flagged")
    func anUnsharedRoundRecoversWorkerFolders() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        let dead = try Spool(path: spool.path)
        try dead.join(as: WorkerID("w2"))
        try dead.deliverNewFile(
            Array(#"{"id":"x","kind":"sleep"}"#.utf8), named: FileName("x@alpha.json"), into: .sending)

        // shared = no again: the spool's own handle, no worker.
        let summary = try spool.runRound()
        #expect(server.countsByKey["x"] == 1)
        #expect(try spool.names(in: .sent) == ["x@alpha.json"])
        #expect(try spool.names(in: .needsAttention).isEmpty)
        #expect(summary.invalid == 0)
    }

    @Test("a file dropped under the name of an entry a live worker is sending is flagged, not sent under its key")
    func anEntryNameAnotherWorkerHoldsIsATwin() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        let (live, held) = try Self.liveClaim(spool, #"{"id":"x","kind":"sleep","n":1}"#)
        try spool.drop(#"{"id":"x","kind":"sleep","n":2}"#, as: "x@alpha.json")

        let summary = try SharedSpoolTests.round(spool, worker: "w1")
        #expect(server.countsByKey["x"] == nil, "a second body went out under the key w2 is sending")
        #expect(summary.invalid == 1)
        #expect(try spool.names(in: .queued).isEmpty)
        withExtendedLifetime((live, held)) {}
    }

    /// The fault sweep's spool, shared: `r-1` is a dead worker's claim.
    static func faultSpool(server: LoopbackServer) throws -> TemporarySpool {
        let spool = try FaultTests.spool(server: server)
        try spool.spool.move(FileName("r-1@alpha.json"), from: .sending, to: .queued)
        let dead = try Spool(path: spool.path)
        try dead.join(as: WorkerID("w2"))
        try spool.spool.directory(.queued).rename(
            FileName("r-1@alpha.json"), to: dead.directory(.sending), as: FileName("r-1@alpha.json"), replacing: false)
        return spool
    }

    /// A round of worker w1 through the spool's own handle (its faults).
    @discardableResult
    static func workerRound(_ spool: TemporarySpool) throws -> RoundSummary {
        let configuration = SharedSpoolTests.configuration(spool, worker: "w1")
        let session = try SpoolSession(spool: spool.spool, worker: configuration.worker)
        session.faults = spool.session.faults
        let result = try Round(session: session, configuration: configuration, mode: .background).run(wait: true)
        guard case .ran(let summary) = result else { throw TestFailure("busy") }
        return summary
    }

    @Test("on a shared spool every failing rename, write and fsync (a dead worker's claims too) leaves a legal spool")
    func theFaultSweepOnASharedSpool() throws {
        let server = try LoopbackServer(status: 201)
        let sweep = try FaultSweep {
            let counting = try Self.faultSpool(server: server)
            let counter = FaultPlan()
            counting.session.faults = counter
            try Self.workerRound(counting)
            try FaultTests.expectLegal(counting, "no fault")
            return counter.counts
        }
        for operation in FaultPlan.Operation.allCases {
            for occurrence in sweep.occurrences(of: operation) {
                let label = "\(operation) #\(occurrence) fails"
                guard
                    let (spool, outcome) = try sweep.reachFailing(
                        label, operation, occurrence, with: Errno(EIO), spool: { try Self.faultSpool(server: server) },
                        run: { try Self.workerRound($0) })
                else { continue }
                switch outcome {
                case .success:
                    Issue.record("\(label): the round finished as if nothing had failed")
                case .failure(let error):
                    #expect("\(error)".contains("unable to"), "\(label): \(error)")
                }
                spool.session.faults = nil
                try Self.workerRound(spool)
                try FaultTests.expectLegal(spool, label)
                #expect(try spool.spool.claims(of: FileName("w2")) == 0, "\(label)")
            }
        }
    }
}
