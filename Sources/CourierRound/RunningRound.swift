import CourierIdentifiers
import CourierPosix
import CourierSpool
import Foundation
import Glibc

/// `.courier/round-running.json` (on a shared spool
/// `round-running.WORKER.json`): the round that holds the lock, for
/// `status`. Written through a commit once the round has run a second (a
/// round that ends sooner writes nothing), then at most every 5 seconds,
/// and removed as the round ends; one a killed round left is removed by
/// the next round of the same worker. A write that fails is a warning:
/// the round's work matters more than its report.
final class RunningRound {
    static let prefix = "round-running"

    /// First written after this long: most rounds end sooner and write nothing.
    static let firstWrite = Duration.seconds(1)
    /// Then no more often than this: each write is a commit and its fsyncs.
    static let rewrite = Duration.seconds(5)
    /// A terminal's progress line is drawn this often at most.
    static let drawing = Duration.milliseconds(250)

    private let session: SpoolSession
    private let name: FileName
    private var progress: RoundProgress
    private let log: EventLog
    private let observer: ((RoundProgress) -> Void)?
    private let started = MonotonicInstant.now()
    private var nextLook: MonotonicInstant
    private var nextWrite: MonotonicInstant
    private var written = false
    private var failed = false
    /// The work outstanding one second in (`queued/` counted once, less
    /// what had been left there on purpose, plus what was out), and the
    /// work done by then.
    private var base: (outstanding: Int, done: Int)?

    static func fileName(worker: WorkerID?) -> FileName {
        FileName(worker.map { "\(prefix).\($0).json" } ?? "\(prefix).json")
    }

    init(
        session: SpoolSession, round: RoundID, mode: RoundMode, started: Timestamp, log: EventLog,
        observer: ((RoundProgress) -> Void)?
    ) {
        self.session = session
        self.log = log
        self.observer = observer
        name = Self.fileName(worker: session.worker)
        progress = RoundProgress(
            round: round, mode: mode, worker: session.worker?.value, host: RoundProgress.hostName(), pid: getpid(),
            started: started.rfc3339, updated: started.rfc3339)
        nextLook = self.started + (observer == nil ? Self.firstWrite : .zero)
        nextWrite = self.started + Self.firstWrite
        // Holding the lock, any file of this worker's is a dead round's.
        if session.spool.readControlFile(name.description, limit: 1 << 16) != nil { remove() }
    }

    /// A turn of the delivery loop; `counts` is asked only when it is time
    /// to look, so a busy loop pays a clock read.
    func tick(_ counts: () -> PassCounts) {
        let now = MonotonicInstant.now()
        guard now >= nextLook else { return }
        nextLook = now + (observer == nil ? Self.rewrite : Self.drawing)
        update(counts(), at: now)
        observer?(progress)
        if now >= nextWrite {
            nextWrite = now + Self.rewrite
            write()
        }
    }

    /// The round is over: its file goes, and a terminal's line is cleared.
    func finish() {
        if written { remove() }
    }

    private func update(_ counts: PassCounts, at now: MonotonicInstant) {
        if base == nil && now - started >= Self.firstWrite {
            let queued = (try? session.spool.directory(.queued).countNames()) ?? 0
            base = (queued - counts.stayers + counts.inFlight + counts.retrying + counts.claimedAhead, counts.done)
        }
        progress.updated = Timestamp.now().rfc3339
        progress.sent = counts.sent
        progress.needsAttention = counts.needsAttention
        progress.deferred = counts.deferred
        progress.inFlight = counts.inFlight
        progress.retrying = counts.retrying
        progress.nextRetrySeconds = counts.nextRetry.map { Int(($0.nanoseconds + 999_999_999) / 1_000_000_000) }
        if let base {
            // Everything done since counts down, what stayed in queued/
            // too: it was outstanding, and the round is through with it.
            // Files dropped after the count are not in it: about, never
            // below zero.
            progress.left = max(0, base.outstanding - (counts.done - base.done))
        }
    }

    private func write() {
        guard !failed else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(progress) else { return }
        do {
            try session.commit(
                Transition(newFiles: [.init(Array(data) + [0x0A], as: name, in: .control, replacing: true)]))
            written = true
        } catch {
            failed = true
            log(.warning, "unable to write .courier/\(name) for status: \(error)")
        }
    }

    private func remove() {
        do { try session.commit(Transition(removals: [.init(name, in: .control)])) } catch {
            log(.warning, "unable to remove .courier/\(name): \(error)")
        }
        written = false
    }
}
