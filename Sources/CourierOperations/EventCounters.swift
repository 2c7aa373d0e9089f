import CourierPosix
import CourierSpool
import Foundation
import Glibc

/// Ledger events counted per subscriber and event since the spool began:
/// `courier_events_total`. The counts and the ledger position they reach
/// are kept in `.courier/event-counts.json` and brought up to date from the
/// lines written since (in every worker's file: a position per file), so
/// they only grow — across runs, and after prune removes the day files they
/// were counted from.
struct EventCounters {
    let session: SpoolSession

    private var spool: Spool { session.spool }

    struct Saved: Codable {
        var position: LedgerPosition?
        /// subscriber → event → count
        var counts: [String: [String: Int]] = [:]

        /// What courier writes: no negative offset (pread(2) would refuse
        /// it on every update), no negative count.
        var isPlausible: Bool {
            (position?.offsets.values.allSatisfy { $0 >= 0 } ?? true)
                && counts.values.allSatisfy { $0.values.allSatisfy { $0 >= 0 } }
        }
    }

    static let fileName = "event-counts.json"

    /// Counted beside the ledger's events: items a server refused for their
    /// version, the sync architecture's "alert on CONFLICT spikes".
    static let conflict = "conflict"

    /// A batch result `CONFLICT`, or a 409 or 412 to a single POST (its
    /// `If-Match` did not match): the line that sent the item to
    /// needsAttention/.
    static func isConflict(_ line: LedgerLine) -> Bool {
        guard line.event == .needsAttention else { return false }
        return line.detail.hasPrefix("status=CONFLICT") || line.status == 409 || line.status == 412
    }

    /// Counts every line written since the last update, saves, and returns
    /// the totals. Commands that update at once take turns on a lock, so no
    /// line is counted twice.
    func update() throws(SpoolError) -> [String: [String: Int]] {
        let lock: FileDescriptor
        do {
            lock = try spool.control.openFile(FileName("event-counts.lock"), flags: O_RDWR | O_CREAT, mode: 0o640)
            // Asked for again, not waited for: on a shared spool another
            // host's command may count at once (`lockExclusivelyAskingAgain`).
            try lock.lockExclusivelyAskingAgain()
        } catch {
            throw SpoolError(error)
        }
        return try withExtendedLifetime(lock) { () throws(SpoolError) -> [String: [String: Int]] in
            // A file that does not decode was edited by hand: counting again
            // from what the ledger still holds is the honest restart.
            var saved =
                (try spool.controlFile(Self.fileName)).flatMap { try? JSONDecoder().decode(Saved.self, from: Data($0)) }
                .flatMap { $0.isPlausible ? $0 : nil } ?? Saved()
            let before = saved.position
            saved.position = try Ledger.readNew(after: saved.position, in: spool.ledgerDirectory) { line in
                let count = saved.counts[line.subscriber]?[line.event.rawValue] ?? 0
                // Saturates: a count edited up to Int.max must not trap
                // every command that writes the metrics.
                saved.counts[line.subscriber, default: [:]][line.event.rawValue] = count == .max ? count : count + 1
                if Self.isConflict(line) {
                    let conflicts = saved.counts[line.subscriber]?[Self.conflict] ?? 0
                    saved.counts[line.subscriber, default: [:]][Self.conflict] =
                        conflicts == .max ? conflicts : conflicts + 1
                }
            }
            if saved.position != before, let data = try? JSONEncoder().encode(saved) {
                try session.commit(
                    Transition(newFiles: [
                        .init(Array(data) + [0x0A], as: FileName(Self.fileName), in: .control, replacing: true)
                    ]))
            }
            return saved.counts
        }
    }
}
