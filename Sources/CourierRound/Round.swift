import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool
import Foundation
import Glibc

/// One round: recover → routes → (send-now --attention: transient failures back to
/// queued/) → deliver, taking dropped files in as it meets them → routes again and a second
/// pass, when intake kept a route or a waiting workout → summary → notify. Every step is a
/// commit of the session's, safe to repeat, so a round killed at any instant is finished by
/// the next.
package struct Round {
    package let session: SpoolSession
    /// What each stage reads of the configuration, built once here.
    package let settings: RoundSettings
    package let mode: RoundMode
    package let log: EventLog
    /// `send-now --attention`: transient failures in needsAttention/ go
    /// back to queued/ before delivery (`AttentionRequeue`).
    package var retryAttention = false
    /// `send-now NAME…`: the round sends only these entries of `queued/`
    /// (due or not) and leaves every other there for the next round; nil
    /// sends everything. Intake still takes dropped files in.
    package var chosen: Set<EntryName>?
    /// Told how far the round has come, a few times a second (a terminal's
    /// progress line); `status` reads the same from `RunningRound`'s file.
    package var progress: ((RoundProgress) -> Void)?
    /// Told once when the round must wait for another to release the spool.
    package var waiting: (() -> Void)?

    /// `session`: opened as this process's worker on a shared spool.
    package init(session: SpoolSession, configuration: Configuration, mode: RoundMode, log: EventLog = .silent) {
        self.session = session
        self.settings = RoundSettings(configuration)
        self.mode = mode
        self.log = log
    }

    package static let lastRoundFile = "last-round.json"

    private var spool: Spool { session.spool }

    /// Runs a round unless another holds the spool; with `wait`, waits for it.
    /// On a shared spool (`shared = yes`) the round is the session's
    /// worker's: it claims into `sending/WORKER/` and runs beside the other
    /// workers'.
    package func run(wait: Bool) throws(RoundError) -> RoundResult {
        var lock: [RoundLock]?
        do {
            lock = try spool.lockWorkerRound(wait: false)
            if lock == nil && wait {
                waiting?()
                lock = try spool.lockWorkerRound(wait: true)
            }
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
        session.actor = .round(round)
        defer { session.actor = .unattributed }
        // Whatever the session was opened with, this configuration's
        // secrets never reach the ledger.
        session.addSecrets(of: settings.redactor)
        log(.debug, "round \(round) (\(mode.rawValue)) started on \(spool.path)")
        var summary = RoundSummary(round: round, mode: mode, started: started)
        let running = RunningRound(
            session: session, round: round, mode: mode, started: started, log: log, observer: progress)
        defer { running.finish() }
        do {
            summary.recovered = try Recovery(session: session, round: round).run()
            // Also on a spool no longer shared: what its workers left in
            // their folders of sending/ goes back (every worker is dead
            // while this round holds round.lock alone).
            summary.recovered += try DeadWorkers(session: session, round: round, log: log).recover()
            try attachRoutes(round: round, started: started, into: &summary)
            if retryAttention {
                let serial = try session.serialLock()
                summary.fromAttention = try withExtendedLifetime(serial) { () throws(SpoolError) -> Int in
                    try AttentionRequeue(session: session, settings: settings.attention, round: round, log: log).run()
                }
            }
        } catch {
            throw .spool(error)
        }
        // Intake happens inside the delivery pass, as it meets dropped files
        // (`IntakeSession`). Routes and workouts it put in awaitingRoute/ are
        // matched after it, and what that frees is sent by a second pass.
        // Made once for both passes: the file-system probe is made here.
        let schedules = settings.schedules.kept(on: spool, log: log)
        let first = try DeliveryPass(
            session: session, settings: settings, round: round, mode: mode, summary: summary, log: log,
            schedules: schedules)
        first.chosen = chosen
        first.onTick = running.tick
        summary = try first.run()
        if first.intakeReport.routesKept > 0 {
            let attached = summary.routesAttached
            do { try attachRoutes(round: round, started: started, into: &summary) } catch {
                throw .spool(error)
            }
            if summary.routesAttached > attached {
                let second = try DeliveryPass(
                    session: session, settings: settings, round: round, mode: mode, summary: summary,
                    log: log, schedules: schedules)
                second.chosen = chosen
                second.onTick = running.tick
                summary = try second.run()
            }
        }
        summary.finished = Timestamp.now().rfc3339
        summary.durationMilliseconds = (MonotonicInstant.now() - clock).milliseconds
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let data = try? encoder.encode(summary) {
            do {
                try session.commit(
                    Transition(newFiles: [
                        .init(
                            Array(data) + [0x0A], as: FileName(Self.lastRoundFile), in: .control, replacing: true,
                            kind: .report)
                    ]))
            } catch {
                throw .spool(error)
            }
        }
        if let health = Notifier(settings.notifier, session: session).notifyIfWanted(summary),
            !health.working
        {
            log(.warning, "notifications not working: \(health.detail)")
        }
        log(.debug, "round \(round) finished in \(summary.durationMilliseconds) ms")
        return summary
    }

    private func attachRoutes(round: RoundID, started: Timestamp, into summary: inout RoundSummary)
        throws(SpoolError)
    {
        let serial = try session.serialLock()
        let routes = try withExtendedLifetime(serial) { () throws(SpoolError) -> RouteReport in
            try RouteStep(session: session, settings: settings.routes, round: round, now: started).run()
        }
        summary.routesAttached += routes.attached.count
        summary.routeTimeouts += routes.timedOut.count
        summary.needsAttention += routes.timedOut.count + routes.failed.count
        summary.attention += routes.timedOut + routes.failed
    }

    /// The summary the last finished round left, if any.
    package static func lastSummary(in spool: Spool) -> RoundSummary? {
        guard let bytes = spool.readControlFile(lastRoundFile) else { return nil }
        return try? JSONDecoder().decode(RoundSummary.self, from: Data(bytes))
    }
}

/// Whatever is in `sending/` when a round starts was in flight when a
/// round died: it goes back to `queued/` with the same key.
struct Recovery {
    let session: SpoolSession
    let round: RoundID

    private var spool: Spool { session.spool }

    /// Files courier itself staged in tmp/ (`TIME.PID_N.NAME`) whose process
    /// is gone: a writer killed between write and rename. Their content is
    /// still in the file that was being taken in, so they are removed now
    /// rather than after prune's 36 hours. Scripts' own tmp/ files, named
    /// any other way, are left to prune. On a shared spool only this
    /// worker's own (`TIME.PID_N.WORKER:NAME`): a PID is one host's, and
    /// another host's writer at work would look dead from here. Other
    /// workers' leftovers wait for prune too; a lock free does not say that
    /// no command of that worker is writing.
    private func deadWritersLeftovers() throws(SpoolError) -> [Transition.Removal] {
        let names: [FileName]
        do { names = try spool.tmp.sortedNames() } catch { throw SpoolError(error) }
        return names.compactMap { name in
            guard let pid = StagingNames.writer(of: name, worker: spool.worker), kill(pid, 0) != 0, errno == ESRCH
            else { return nil }
            return Transition.Removal(name, in: .tmp)
        }
    }

    /// An entry in `sending/` with a second name is a rename a power cut
    /// left half done (`HalfRename`): the half is resolved here, before
    /// anything reads it. True when the entry is now elsewhere, not in
    /// `sending/`. One status per entry in `sending/`, which is small.
    private func resolvesElsewhere(_ name: FileName) throws(SpoolError) -> Bool {
        let status: FileStatus?
        do { status = try spool.directory(.sending).status(of: name) } catch { throw SpoolError(error) }
        guard let status, status.links > 1 else { return false }
        if let kept = try session.resolveHalfRename(name, in: SpoolState.allCases) { return kept != .sending }
        // A twin's flag, half done: the flagged file is in needsAttention/.
        if try session.resolveHalfFlag(name, in: .sending) == .removedHere { return true }
        if let entry = EntryName(fileName: name), let dropped = try session.droppedName(sameFileAs: status) {
            try session.resolveHalfIntake(dropped, into: entry, in: .sending)
        }
        return false
    }

    func run() throws(SpoolError) -> Int {
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
        var staying: [FileName] = []
        for name in names where try !resolvesElsewhere(name) { staying.append(name) }
        names = staying
        let now = Timestamp.now()
        var transition = Transition(removals: try deadWritersLeftovers())
        transition.lines = names.map { name in
            let entry = EntryName(fileName: name)
            return LedgerLine(
                time: now, actor: .round(round), subscriber: entry?.subscriber,
                key: entry?.key.description ?? name.description, event: .recovered,
                detail: "was in sending/ when a round stopped; back to queued/")
        }
        transition.moves = names.map { Transition.Move($0, from: .state(.sending), to: .state(.queued)) }
        let committed = try session.commit(transition)
        return names.count - committed.vanished.count
    }
}
