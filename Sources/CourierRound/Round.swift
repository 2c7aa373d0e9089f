import CourierConfig
import CourierPosix
import CourierSpool
import Foundation
import Glibc

/// One round: recover → intake → routes → deliver → summary → notify. Every step is safe
/// to repeat, so a round killed at any instant is finished by the next.
public struct Round {
    public let spool: Spool
    public let configuration: Configuration
    public let mode: RoundMode
    public let log: EventLog
    /// `send-now --attention`: transient failures in needsAttention/ go
    /// back to queued/ before delivery (`AttentionRequeue`).
    public var retryAttention = false

    public init(spool: Spool, configuration: Configuration, mode: RoundMode, log: EventLog = .silent) {
        self.spool = spool
        self.configuration = configuration
        self.mode = mode
        self.log = log
    }

    public static let lastRoundFile = "last-round.json"

    /// Runs a round unless another holds the spool; with `wait`, waits for it.
    /// On a shared spool (`shared = yes`) the round is this worker's: it
    /// claims into `sending/WORKER/` and runs beside the other workers'.
    public func run(wait: Bool) throws(RoundError) -> RoundResult {
        let lock: [RoundLock]?
        do {
            if let worker = configuration.worker, spool.worker == nil { try spool.join(as: worker) }
            lock = try spool.lockWorkerRound(wait: wait)
        } catch {
            throw .spool(error)
        }
        guard let lock else { return .busy }
        return try withExtendedLifetime(lock) { () throws(RoundError) -> RoundResult in
            .ran(try runLocked())
        }
    }

    private func runLocked() throws(RoundError) -> RoundSummary {
        let started = Timestamp.now()
        let clock = MonotonicInstant.now()
        let round = RoundID.make(at: started)
        let ledger = Ledger(
            directory: spool.ledgerDirectory, log: log, faults: spool.faults, redactor: configuration.redactor,
            worker: spool.worker)
        log(.debug, "round \(round) (\(mode.rawValue)) started on \(spool.path)")
        var summary = RoundSummary(round: round, mode: mode, started: started)
        do {
            summary.recovered = try Recovery(spool: spool, ledger: ledger, round: round).run()
            // Also on a spool no longer shared: what its workers left in
            // their folders of sending/ goes back (every worker is dead
            // while this round holds round.lock alone).
            summary.recovered += try DeadWorkers(spool: spool, ledger: ledger, round: round, log: log).recover()
            try attachRoutes(ledger: ledger, round: round, started: started, into: &summary)
            if retryAttention {
                let serial = try spool.serialLock()
                summary.fromAttention = try withExtendedLifetime(serial) { () throws(SpoolError) -> Int in
                    try AttentionRequeue(
                        spool: spool, configuration: configuration, ledger: ledger, round: round, log: log
                    ).run()
                }
            }
        } catch {
            throw .spool(error)
        }
        // Intake happens inside the delivery pass, as it meets dropped files
        // (`IntakeSession`). Routes and workouts it put in awaitingRoute/ are
        // matched after it, and what that frees is sent by a second pass.
        let first = try DeliveryPass(
            spool: spool, configuration: configuration, ledger: ledger, round: round, mode: mode, summary: summary,
            log: log)
        summary = try first.run()
        if first.intakeReport.routesKept > 0 {
            let attached = summary.routesAttached
            do { try attachRoutes(ledger: ledger, round: round, started: started, into: &summary) } catch {
                throw .spool(error)
            }
            if summary.routesAttached > attached {
                summary = try DeliveryPass(
                    spool: spool, configuration: configuration, ledger: ledger, round: round, mode: mode,
                    summary: summary, log: log
                ).run()
            }
        }
        summary.finished = Timestamp.now().rfc3339
        summary.durationMilliseconds = (MonotonicInstant.now() - clock).milliseconds
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let data = try? encoder.encode(summary) {
            do { try spool.writeControlFile(Self.lastRoundFile, Array(data) + [0x0A]) } catch { throw .spool(error) }
        }
        if let health = Notifier(configuration: configuration, spool: spool).notifyIfWanted(summary), !health.working {
            log(.warning, "notifications not working: \(health.detail)")
        }
        log(.debug, "round \(round) finished in \(summary.durationMilliseconds) ms")
        return summary
    }

    private func attachRoutes(ledger: Ledger, round: RoundID, started: Timestamp, into summary: inout RoundSummary)
        throws(SpoolError)
    {
        let serial = try spool.serialLock()
        let routes = try withExtendedLifetime(serial) { () throws(SpoolError) -> RouteReport in
            try RouteStep(spool: spool, configuration: configuration, ledger: ledger, round: round, now: started).run()
        }
        summary.routesAttached += routes.attached.count
        summary.routeTimeouts += routes.timedOut.count
        summary.needsAttention += routes.timedOut.count + routes.failed.count
        summary.attention += routes.timedOut + routes.failed
    }

    /// The summary the last finished round left, if any.
    public static func lastSummary(in spool: Spool) -> RoundSummary? {
        guard let bytes = spool.readControlFile(lastRoundFile) else { return nil }
        return try? JSONDecoder().decode(RoundSummary.self, from: Data(bytes))
    }
}

/// Whatever is in `sending/` when a round starts was in flight when a
/// round died: it goes back to `queued/` with the same key.
struct Recovery {
    let spool: Spool
    let ledger: Ledger
    let round: RoundID

    /// Files courier itself staged in tmp/ (`TIME.PID_N.NAME`) whose process
    /// is gone: a writer killed between write and rename. Their content is
    /// still in the file that was being taken in, so they are removed now
    /// rather than after prune's 36 hours. Scripts' own tmp/ files, named
    /// any other way, are left to prune. On a shared spool only this
    /// worker's own (`TIME.PID_N.WORKER:NAME`): a PID is one host's, and
    /// another host's writer at work would look dead from here. Other
    /// workers' leftovers wait for prune too; a lock free does not say that
    /// no command of that worker is writing.
    private func removeDeadWritersLeftovers() throws(SpoolError) {
        let names: [FileName]
        do { names = try spool.tmp.sortedNames() } catch { throw SpoolError(error) }
        for name in names {
            guard let pid = StagingNames.writer(of: name, worker: spool.worker), kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            do { try spool.tmp.remove(name) } catch { throw SpoolError(error) }
        }
    }

    func run() throws(SpoolError) -> Int {
        try removeDeadWritersLeftovers()
        var names: [FileName] = []
        do {
            let stream = try spool.directory(.sending).entries()
            while let name = try stream.next() {
                // A folder straight in sending/ of a spool with one worker
                // is a worker's from when the spool was shared: its claims
                // go back one by one (`DeadWorkers`), never the folder
                // itself, which intake would flag with the claims inside.
                if spool.worker == nil {
                    var kind = stream.lastKind
                    if kind == nil { kind = try spool.sendingRoot.status(of: name)?.kind }
                    if kind == .directory { continue }
                }
                names.append(name)
            }
        } catch {
            throw SpoolError(error)
        }
        names.sort()
        guard !names.isEmpty else { return 0 }
        let now = Timestamp.now()
        let lines = names.map { name in
            let entry = EntryName(fileName: name)
            return LedgerLine(
                time: now, round: round.value, subscriber: entry?.subscriber.value ?? "-",
                key: entry?.key.description ?? name.description, event: .recovered,
                detail: "was in sending/ when a round stopped; back to queued/")
        }
        try ledger.append(lines)
        for name in names {
            do {
                try spool.move(name, from: .sending, to: .queued)
            } catch {
                if case .rename(_, _, let errno) = error, errno == .noSuchFile { continue }
                throw error
            }
        }
        try spool.sync([.sending, .queued])
        return names.count
    }
}
