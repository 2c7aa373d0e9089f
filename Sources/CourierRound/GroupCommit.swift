import CourierPosix
import CourierSpool

/// The group commit of a delivery pass: finished items wait in `sending/`
/// (their slots already reused) while their transitions gather, until
/// `size` ledger lines are ready or the oldest has waited `delay`; then one
/// commit covers them all: one ledger write and fsync, the renames out of
/// `sending/`, one fsync per folder. The ledger line is always on disk
/// before the rename it records, and so is an etag the server gave for the
/// item's entity.
final class GroupCommit {
    private let session: SpoolSession
    private let log: EventLog
    private var gathered = Transition()
    /// When the oldest waiting item finished.
    private(set) var oldest: MonotonicInstant?

    static let size = 256
    /// Each commit costs a ledger fsync and one per folder, and the loop
    /// waits for them: at 10 ms a busy round committed every 17 items or
    /// so, and spent more time in fsync than in curl. A crash loses at
    /// most this much of settled state, which the next round sends again
    /// under the same keys.
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

    func commit() throws(RoundError) {
        guard !gathered.isEmpty else { return }
        let committed: Committed
        do { committed = try session.commit(gathered) } catch { throw .spool(error) }
        for move in committed.vanished {
            // A person moved it meanwhile: theirs is the last word.
            log(.warning, "\(move.from)\(move.name) was moved away by someone else; it stays where they put it")
        }
        gathered = Transition()
        oldest = nil
    }
}
