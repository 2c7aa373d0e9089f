import CourierPosix
import CourierSpool

/// The group commit of a delivery pass: finished items wait in `sending/`
/// (their slots already reused) until `size` are ready or the oldest has
/// waited `delay`; then one ledger write and fsync, the renames out of
/// `sending/`, and one fsync per folder cover them all. The ledger line is
/// always on disk before the rename it records, and so is an etag the
/// server gave for the item's entity.
final class GroupCommit {
    private let spool: Spool
    private let ledger: Ledger
    private let log: EventLog
    private var lines: [LedgerLine] = []
    private var moves: [(EntryName, SpoolState)] = []
    private var tags: [EntityTagUpdate] = []
    private let tagStore: EntityTagStore
    private var stamps: [(EntryName, Timestamp)] = []
    /// When the oldest waiting item finished.
    private(set) var oldest: MonotonicInstant?

    static let size = 256
    /// Each commit costs a ledger fsync and one per folder, and the loop
    /// waits for them: at 10 ms a busy round committed every 17 items or
    /// so, and spent more time in fsync than in curl. A crash loses at
    /// most this much of settled state, which the next round sends again
    /// under the same keys.
    static let delay: Duration = .milliseconds(100)

    init(spool: Spool, ledger: Ledger, log: EventLog) {
        self.spool = spool
        self.ledger = ledger
        self.log = log
        tagStore = EntityTagStore(spool: spool)
    }

    /// Lines to write, etags to keep and moves out of `sending/` to make at
    /// the next commit. `stamps`: modification times to set in `sending/`
    /// first (deferrals).
    func add(
        lines: [LedgerLine], moves: [(EntryName, SpoolState)], tags: [EntityTagUpdate] = [],
        stamps: [(EntryName, Timestamp)] = [], at now: MonotonicInstant
    ) {
        guard !lines.isEmpty || !moves.isEmpty else { return }
        self.lines += lines
        self.moves += moves
        self.tags += tags
        self.stamps += stamps
        if oldest == nil { oldest = now }
    }

    /// When the commit must happen at the latest, if anything waits.
    var deadline: MonotonicInstant? { oldest.map { $0 + Self.delay } }

    /// Due when full, old enough, or when nothing else is in flight.
    func isDue(at now: MonotonicInstant, idle: Bool) -> Bool {
        guard let oldest else { return false }
        return lines.count >= Self.size || now - oldest >= Self.delay || idle
    }

    func commit() throws(RoundError) {
        guard !lines.isEmpty || !moves.isEmpty else { return }
        do throws(SpoolError) {
            try ledger.append(lines)
            // Before the items leave sending/: a crash in between sends them
            // again, and the server's answer brings the etag again.
            try tagStore.keep(tags)
            // A deferral's time is set on the file in sending/, before the
            // rename that takes it back to queued/: a crash in between
            // leaves it in sending/ with its new time, and recovery returns
            // it to queued/ keeping that time. Renaming first would let a
            // crash leave it in queued/ with its old time: due at once.
            // (A vanished file is the rename's to report.)
            for (entry, time) in stamps { _ = try spool.setModified(entry.fileName, in: .sending, to: time) }
            for (entry, state) in moves {
                do {
                    try spool.move(entry.fileName, from: .sending, to: state)
                } catch {
                    // A person moved it meanwhile: theirs is the last word.
                    guard case .rename(_, _, let errno) = error, errno == .noSuchFile else { throw error }
                    log(.warning, "sending/\(entry) was moved away by someone else; it stays where they put it")
                }
            }
            try spool.sync(moves.map(\.1) + [.sending])
        } catch {
            throw .spool(error)
        }
        lines.removeAll(keepingCapacity: true)
        moves.removeAll(keepingCapacity: true)
        tags.removeAll()
        stamps.removeAll(keepingCapacity: true)
        oldest = nil
    }
}
