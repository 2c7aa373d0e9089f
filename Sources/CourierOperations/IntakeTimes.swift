import CourierPosix
import CourierSpool

/// When items were taken in, the one source of every age courier shows
/// (`list`, `status --ages`, `--older-than`, the metrics): the file's own
/// `takenIn`, and for the few a file cannot tell (a deferred entry on a file
/// system that keeps no birth time) the item's `accepted` ledger line, the
/// ledger read once for all of them. A round's hot path never asks.
final class IntakeTimes {
    private let spool: Spool
    /// "SUB\tKEY" → the time of its last `accepted` line; read on first need.
    private var accepted: [String: Timestamp]?

    init(spool: Spool) { self.spool = spool }

    func of(_ item: SpoolItem, _ status: FileStatus) -> Timestamp {
        if let taken = status.takenIn { return taken }
        if accepted == nil { accepted = readAccepted() }
        // A file with no line either (one a person put there) counts from
        // its last change of state.
        return accepted?[item.ledgerSubscriber + "\t" + item.ledgerKey] ?? status.changed
    }

    private func readAccepted() -> [String: Timestamp] {
        var found: [String: Timestamp] = [:]
        // A ledger that cannot be read leaves the fallback to the file.
        _ = try? Ledger.read(from: spool.ledgerDirectory) { line in
            if line.event == .accepted || line.event == .awaitingRoute {
                found[line.subscriber + "\t" + line.key] = line.time
            }
        }
        return found
    }
}
