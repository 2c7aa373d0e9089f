import CourierPosix
import CourierSpool

/// The commits of a delivery pass. Finished items wait in `sending/`
/// (their slots already reused) while their transitions gather, until
/// `size` ledger lines are ready or the oldest has waited `delay`; then one
/// commit covers them all: one ledger write and fsync, the renames out of
/// `sending/`, one fsync per folder. The ledger line is always on disk
/// before the rename it records, and so is an etag the server gave for the
/// item's entity. Intake's groups are committed here too (`handIntake`):
/// their entries reach the pass once their commit is done.
///
/// Commits run on a thread of its own (`CommitThread`), one at a time in
/// the order handed, while the pass goes on: what is handed while one runs
/// waits in a queue, at most one group commit in it; an intake group and a
/// group commit waiting together are carried out as one commit. The loop
/// waits only when it has nothing else to do, and at the end of the pass. Every other use of the session by the pass goes through
/// `exclusive`, so the session has one user at a time (`SessionGate`), and
/// a commit that failed meanwhile is the pass's error before it does
/// anything more with the spool.
final class GroupCommit {
    /// Commits handed and not carried out yet, in order.
    private enum Job {
        /// What the group commits gathered.
        case settle(Transition)
        /// An intake group's planned commit, and what the pass does once
        /// it is done.
        case intake(IntakeJob)

        var isSettle: Bool {
            if case .settle = self { true } else { false }
        }
    }

    private let session: SpoolSession
    private let log: EventLog
    private var gathered = Transition()
    /// When the oldest waiting item finished.
    private(set) var oldest: MonotonicInstant?
    private let gate = SessionGate()
    /// Started by the first commit: a pass with nothing to commit makes none.
    private var thread: CommitThread?
    private var threadFailed = false
    /// A commit failed: nothing more is carried out (`stop`).
    private var commitFailed = false
    private var queue: [Job] = []
    /// A job is out on the thread, its outcome not taken yet.
    private var running: Running?

    /// What is out on the thread: with what to do after it, for an intake
    /// group. (Only that: what the job captured goes on the thread, under
    /// the gate.)
    private enum Running {
        case settle
        case intake(done: () -> Void)
    }

    static let size = 256
    /// Each commit costs a ledger fsync and one per folder: at 10 ms a
    /// busy round committed every 17 items or so, and spent more time in
    /// fsync than in curl. A crash loses at most this much of settled
    /// state (and the commits still queued), which the next round sends
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

    /// What `body` adds to the next commit, added in place (settling: one
    /// answer a record, whose lines and moves are not worth a transition
    /// of their own to copy in).
    func gather<Result>(at now: MonotonicInstant, _ body: (inout Transition) -> Result) -> Result {
        let result = body(&gathered)
        if oldest == nil && !gathered.isEmpty { oldest = now }
        return result
    }

    /// When the commit must happen at the latest, if anything waits.
    var deadline: MonotonicInstant? { oldest.map { $0 + Self.delay } }

    /// A commit runs or waits to run.
    var isBusy: Bool { running != nil || !queue.isEmpty }

    /// While a job is out on the thread: a file descriptor readable once
    /// it finished, for the loop to wait on with its answers.
    var finishedSignal: Int32? {
        guard running != nil else { return nil }
        return thread?.finishedSignal?.descriptor
    }

    /// Due when full or old enough. (The pass also commits when it has
    /// nothing in flight after starting what it can, rather than wait.)
    func isDue(at now: MonotonicInstant) -> Bool {
        guard let oldest else { return false }
        return gathered.lines.count >= Self.size || now - oldest >= Self.delay
    }

    /// Hands what has gathered to the commit thread. One group commit
    /// waits in the queue at most: a second waits for the thread first.
    /// (Two are never merged: that bounds what a crash repeats.)
    func commit() throws(RoundError) {
        guard !gathered.isEmpty else { return }
        while queue.contains(where: \.isSettle) { try waitForRunning() }
        let transition = gathered
        gathered = Transition()
        oldest = nil
        queue.append(.settle(transition))
        try pump()
    }

    /// Hands an intake group's commit; its `done` runs on the loop once
    /// it succeeded.
    func handIntake(_ job: IntakeJob) throws(RoundError) {
        queue.append(.intake(job))
        try pump()
    }

    /// The end of the pass: everything gathered is committed, and the
    /// last commit has finished.
    func finish() throws(RoundError) {
        // An intake group done meanwhile may put entries back (`DeliveryPass.arrive`).
        while isBusy || !gathered.isEmpty {
            try commit()
            try waitForRunning()
        }
    }

    /// The pass stopped on `error`: the commit running finishes, and if it
    /// failed, its error is the pass's (it was handed before the pass went
    /// on). Otherwise the answers the pass collected are still committed:
    /// their ledger lines are attempts that were made, and left in
    /// `sending/` they would be sent again. A failure of those is logged
    /// under the pass's own error. Intake groups waiting in the queue are
    /// not carried out: their dropped files stay in `queued/` for the next
    /// round. Once a commit has failed nothing more is: its items and every
    /// later one's stay in `sending/` for recovery, as after a crash.
    func stop(after error: RoundError) -> RoundError {
        queue.removeAll { !$0.isSettle }
        guard !commitFailed else {
            queue.removeAll()
            return error
        }
        if running != nil, let thread {
            do { try finished(thread.wait()) } catch let failed {
                queue.removeAll()
                return failed
            }
        }
        do { try finish() } catch let failed {
            log(.error, "the answers collected before the round stopped are not recorded: \(failed)")
        }
        return error
    }

    /// The last commit's warnings and error, if it has finished; no wait.
    func check() throws(RoundError) {
        guard running != nil, let thread, let outcome = thread.poll() else { return }
        try finished(outcome)
    }

    /// Waits for the commit running, if one is, and hands the next.
    func waitForRunning() throws(RoundError) {
        if running == nil { try pump() }
        guard running != nil, let thread else { return }
        try finished(thread.wait())
    }

    /// `body` uses the session: it waits for a commit running meanwhile,
    /// and does not run after one that failed.
    func exclusive(_ body: () throws(RoundError) -> Void) throws(RoundError) {
        try gate.hold { () throws(RoundError) in
            try check()
            try body()
        }
    }

    /// `body` as `exclusive` does, only if no commit holds the session
    /// now; false when it did not run (the loop has requests to see to
    /// meanwhile).
    func exclusiveIfFree(_ body: () throws(RoundError) -> Void) throws(RoundError) -> Bool {
        try gate.holdIfFree { () throws(RoundError) in
            try check()
            try body()
        }
    }

    /// `body`, only while no commit is out (the progress file, which can
    /// wait for a later turn of the loop).
    func whenIdle(_ body: () -> Void) {
        guard !isBusy else { return }
        gate.hold(body)
    }

    /// The running job's outcome taken: its warnings logged, its error
    /// thrown, an intake group's entries passed on; then the next job.
    private func finished(_ outcome: CommitThread.Outcome) throws(RoundError) {
        let done: (() -> Void)? = if case .intake(let done) = running { done } else { nil }
        running = nil
        try report(outcome)
        done?()
        try pump()
    }

    /// Hands the first job in the queue if none runs. Without a thread
    /// (the system's limit) each is carried out here, holding the gate.
    private func pump() throws(RoundError) {
        while running == nil, !queue.isEmpty {
            if thread == nil && !threadFailed {
                thread = CommitThread.start(gate: gate)
                threadFailed = thread == nil
            }
            let work: () -> CommitThread.Outcome
            var done: (() -> Void)?
            switch queue.removeFirst() {
            case .settle(let transition):
                // An intake group waiting behind it goes in the same commit
                // (one ledger fsync, each folder synced once), first.
                if let index = queue.firstIndex(where: { !$0.isSettle }), case .intake(let intake) = queue[index] {
                    queue.remove(at: index)
                    work = intake.work(with: transition, in: session)
                    done = intake.done
                } else {
                    work = { [session] in CommitThread.carryOut(transition, in: session) }
                }
            case .intake(let intake):
                var settled: Transition?
                if let index = queue.firstIndex(where: \.isSettle), case .settle(let transition) = queue[index] {
                    queue.remove(at: index)
                    settled = transition
                }
                work = intake.work(with: settled, in: session)
                done = intake.done
            }
            guard let thread else {
                try gate.hold { () throws(RoundError) in try report(work()) }
                done?()
                continue
            }
            thread.hand(work)
            running = done.map { .intake(done: $0) } ?? .settle
        }
    }

    private func report(_ outcome: CommitThread.Outcome) throws(RoundError) {
        switch outcome {
        case .success(let warnings):
            for warning in warnings { log(.warning, warning) }
        case .failure(let error):
            commitFailed = true
            throw .spool(error)
        }
    }
}

/// An intake group's commit as the pass hands it (`IntakeSession.hand`):
/// the planned transition, the group's hold of the serial lock, and what
/// the pass does once it is done.
struct IntakeJob {
    let plan: IntakeCommit.Plan
    let hold: GroupHold
    let done: () -> Void

    /// The commit, with a group commit's transition in it if one waits:
    /// the group's lines and moves first, so its `queued/` is synced
    /// before the `sending/` both use. The hold ends with it, on the
    /// commit thread, holding the gate.
    func work(with settled: Transition?, in session: SpoolSession) -> () -> CommitThread.Outcome {
        { [plan, hold] in
            defer { hold.end() }
            do throws(SpoolError) {
                return .success(try IntakeCommit.carryOut(plan, with: settled, in: session))
            } catch {
                return .failure(error)
            }
        }
    }
}

/// An intake group's hold of the serial lock, from its first file to the
/// end of its commit: ended by the commit thread, holding the gate (the
/// session's record of its hold is session state), whichever thread lets
/// go of the job last.
final class GroupHold {
    private var lock: SerialLock?

    init(_ lock: SerialLock?) { self.lock = lock }

    func end() { lock = nil }
}
