import Testing

@testable import CourierPosix

/// How the sweeps over whole rounds reach every fault. A round's commits
/// run on a thread of their own, beside its HTTP loop and its intake
/// reading on, so how many commits a round makes — and so how many
/// writes and fsyncs — can differ by one or two from run to run, with the
/// order in which answers and commits happen to finish. So clean rounds
/// are counted a few times: every occurrence up to the most seen is swept,
/// and a faulted round that never reached its occurrence (it made fewer)
/// is run again on a fresh spool. An occurrence every clean round reached
/// must be reached; one beyond is swept when some attempt reaches it. Every
/// run that reached its fault is checked in full.
///
/// Three clean rounds are a small sample: a machine under load can shift
/// the commits' timing for a while, so that every faulted run falls one
/// short of an occurrence the first three all reached. So a miss is
/// measured again at once: clean rounds are counted beside it, and only an
/// occurrence that every one of them still reaches, where no faulted run
/// did, is an issue (a fault plan that changes the round before its fault).
struct FaultSweep {
    static let countingRuns = 3
    static let attempts = 5

    /// The least and the most of each operation over the clean rounds.
    let least: [FaultPlan.Operation: Int]
    let most: [FaultPlan.Operation: Int]
    private let count: () throws -> [FaultPlan.Operation: Int]

    /// `count` runs one clean round and returns its plan's counts.
    init(counting count: @escaping () throws -> [FaultPlan.Operation: Int]) throws {
        self.count = count
        var least: [FaultPlan.Operation: Int] = [:]
        var most: [FaultPlan.Operation: Int] = [:]
        for run in 0..<Self.countingRuns {
            let counts = try count()
            for operation in FaultPlan.Operation.allCases {
                let seen = counts[operation] ?? 0
                least[operation] = run == 0 ? seen : min(least[operation] ?? 0, seen)
                most[operation] = max(most[operation] ?? 0, seen)
            }
        }
        self.least = least
        self.most = most
    }

    /// Every occurrence of `operation` to sweep.
    func occurrences(of operation: FaultPlan.Operation) -> StrideThrough<Int> {
        stride(from: 1, through: most[operation] ?? 0, by: 1)
    }

    /// The first of up to `attempts` runs of `attempt` (a fresh spool and
    /// the faulted run) that `reached` says met its fault; nil when none
    /// did, an issue recorded if every clean round reached `occurrence`.
    func reach<Run>(
        _ label: String, _ operation: FaultPlan.Operation, _ occurrence: Int, _ attempt: () throws -> Run,
        reached: (Run) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Run? {
        for _ in 0..<Self.attempts {
            let run = try attempt()
            if reached(run) { return run }
        }
        guard occurrence <= least[operation] ?? 0 else { return nil }
        for _ in 0..<Self.attempts where (try count()[operation] ?? 0) < occurrence {
            return nil
        }
        Issue.record(
            "\(label): every clean round reached it (\(Self.attempts) more, counted now, too), no faulted run of \(Self.attempts) did",
            sourceLocation: sourceLocation)
        return nil
    }

    /// `reach` for the plan that fails `operation` at `occurrence` with
    /// `error`: a fresh spool from `make` with the plan as its faults, and
    /// what `run` on it came to.
    func reachFailing<Outcome>(
        _ label: String, _ operation: FaultPlan.Operation, _ occurrence: Int, with error: Errno,
        spool make: () throws -> TemporarySpool, run: (TemporarySpool) throws -> Outcome,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (spool: TemporarySpool, outcome: Result<Outcome, any Error>)? {
        try reach(
            label, operation, occurrence,
            {
                let spool = try make()
                let plan = FaultPlan(failing: operation, at: occurrence, with: error)
                spool.session.faults = plan
                return (spool, plan, Result { try run(spool) })
            }, reached: { ($0.1.counts[operation] ?? 0) >= occurrence }, sourceLocation: sourceLocation
        ).map { ($0.0, $0.2) }
    }
}
