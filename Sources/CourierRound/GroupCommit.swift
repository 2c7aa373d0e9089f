import CourierPosix
import CourierSpool

/// The group commit of a delivery pass: finished items wait in `sending/`
/// (their slots already reused) while their transitions gather, until
/// `size` ledger lines are ready or the oldest has waited `delay`; then one
/// commit covers them all: one ledger write and fsync, the renames out of
/// `sending/`, one fsync per folder. The ledger line is always on disk
/// before the rename it records, and so is an etag the server gave for the
/// item's entity.
///
/// The commit runs on a thread of its own (`CommitThread`) while the pass
/// gathers the next one: the loop waits only when the next is due and the
/// previous still runs, and at the end of the pass. Every other use of the
/// session by the pass goes through `exclusive`, so the session has one
/// user at a time (`SessionGate`), and a commit that failed meanwhile is
/// the pass's error before it does anything more with the spool.
final class GroupCommit {
    private let session: SpoolSession
    private let log: EventLog
    private var gathered = Transition()
    /// When the oldest waiting item finished.
    private(set) var oldest: MonotonicInstant?
    private let gate = SessionGate()
    /// Started by the first commit: a pass with nothing to commit makes none.
    private var thread: CommitThread?
    private var threadFailed = false
    /// A commit was handed and its outcome not taken yet.
    private var running = false

    static let size = 256
    /// Each commit costs a ledger fsync and one per folder: at 10 ms a
    /// busy round committed every 17 items or so, and spent more time in
    /// fsync than in curl. A crash loses at most this much of settled
    /// state (and the commit still running), which the next round sends
    /// again under the same keys.
    static let delay: Duration = .milliseconds(100)

    init(session: SpoolSession, log: EventLog) {
        self.session = session
        self.log = log
    }

    /// A transition to carry out at the next commit.
    func add(_ transition: Transition, at now: MonotonicInstant) {
        guard !transition.isEmpty else { return }
        gathered.append(transition)
        if oldest == nil { oldest = now }
    }

    /// When the commit must happen at the latest, if anything waits.
    var deadline: MonotonicInstant? { oldest.map { $0 + Self.delay } }

    /// Due when full or old enough. (The pass also commits when it has
    /// nothing in flight after starting what it can, rather than wait.)
    func isDue(at now: MonotonicInstant) -> Bool {
        guard let oldest else { return false }
        return gathered.lines.count >= Self.size || now - oldest >= Self.delay
    }

    /// Hands what has gathered to the commit thread, after the previous
    /// commit has finished.
    func commit() throws(RoundError) {
        guard !gathered.isEmpty else { return }
        if running, let thread {
            running = false
            try report(thread.wait())
        }
        if thread == nil && !threadFailed {
            thread = CommitThread.start(gate: gate)
            threadFailed = thread == nil
        }
        let transition = gathered
        gathered = Transition()
        oldest = nil
        guard let thread else {
            try gate.hold { () throws(RoundError) in try report(CommitThread.carryOut(transition, in: session)) }
            return
        }
        thread.hand(transition, of: session)
        running = true
    }

    /// The end of the pass: everything gathered is committed, and the
    /// last commit has finished.
    func finish() throws(RoundError) {
        try commit()
        if running, let thread {
            running = false
            try report(thread.wait())
        }
    }

    /// The pass stopped on `error`: the commit still running finishes,
    /// and if it failed, its error is the pass's (it was handed before the
    /// pass went on).
    func abandon(after error: RoundError) -> RoundError {
        guard running, let thread else { return error }
        running = false
        do { try report(thread.wait()) } catch let failed { return failed }
        return error
    }

    /// The last commit's warnings and error, if it has finished; no wait.
    func check() throws(RoundError) {
        guard running, let thread, let outcome = thread.poll() else { return }
        running = false
        try report(outcome)
    }

    /// `body` uses the session: it waits for a commit running meanwhile,
    /// and does not run after one that failed.
    func exclusive(_ body: () throws(RoundError) -> Void) throws(RoundError) {
        try gate.hold { () throws(RoundError) in
            try check()
            try body()
        }
    }

    /// `body`, only while no commit is out (the progress file, which can
    /// wait for a later turn of the loop).
    func whenIdle(_ body: () -> Void) {
        guard !running else { return }
        gate.hold(body)
    }

    private func report(_ outcome: CommitThread.Outcome) throws(RoundError) {
        switch outcome {
        case .success(let warnings):
            for warning in warnings { log(.warning, warning) }
        case .failure(let error):
            throw .spool(error)
        }
    }
}
