import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool
import CourierSupport

/// `courier send-now --attention`, the manual "dispatch now" of the seeds:
/// every entry in `needsAttention/` whose failure was transient (its last
/// ledger line says so, `TransientFailure`) goes back to `queued/` with a
/// `resent` line, under this round's lock and before its delivery, so the
/// same foreground round sends it. What a retry cannot fix (a 4xx, a
/// refused file, a certificate) stays for a person, and so does what a
/// held or unconfigured subscriber would only leave waiting.
struct AttentionRequeue {
    let session: SpoolSession
    let settings: AttentionRequeueSettings
    let round: RoundID
    let log: EventLog

    private var spool: Spool { session.spool }

    /// How many entries went back to `queued/`.
    func run() throws(SpoolError) -> Int {
        let folder = spool.directory(.needsAttention)
        var waiting: [String: EntryName] = [:]
        var oldest: Timestamp?
        do {
            let stream = try folder.entries()
            while let name = try stream.next() {
                guard let entry = EntryName(fileName: name), let status = try folder.status(of: name) else { continue }
                waiting[Self.ledgerKey(entry.subscriber.value, entry.key.description)] = entry
                if oldest.map({ status.changed < $0 }) ?? true { oldest = status.changed }
            }
        } catch {
            throw SpoolError(error)
        }
        guard let oldest else { return 0 }
        // An entry's last line is the one written as it entered
        // needsAttention/, just before the rename that set its change time;
        // a day earlier covers a rename just after midnight. Unless the last
        // is a `resent` whose move a crash undid (the line is written first):
        // then the failure before it still says why the entry is here.
        var last: [String: LedgerLine] = [:]
        _ = try Ledger.read(from: spool.ledgerDirectory, sinceDay: (oldest - .seconds(86_400)).utcDay) { line in
            let key = Self.ledgerKey(line.subscriber, line.key)
            guard waiting[key] != nil else { return }
            if line.event == .resent, last[key]?.event == .needsAttention { return }
            last[key] = line
        }
        let held = Set(try spool.holds().map(\.subscriber))
        var heldBack: [SubscriberName: Int] = [:]
        var chosen: [(EntryName, LedgerLine)] = []
        for (key, entry) in waiting.sorted(by: { $0.key < $1.key }) {
            guard let line = last[key], TransientFailure.recorded(in: line),
                settings.subscribers.contains(entry.subscriber)
            else { continue }
            if held.contains(entry.subscriber) {
                heldBack[entry.subscriber, default: 0] += 1
                continue
            }
            chosen.append((entry, line))
        }
        for (subscriber, count) in heldBack.sorted(by: { $0.key < $1.key }) {
            log(.notice, "\(subscriber) is held: its \(count) transient failures stay in needsAttention/")
        }
        guard !chosen.isEmpty else { return 0 }
        let now = Timestamp.now()
        var transition = Transition()
        transition.lines =
            chosen.map { entry, failure in
                LedgerLine(
                    time: now, actor: .round(round), subscriber: entry.subscriber, key: entry.key.description,
                    event: .resent,
                    detail: "send-now --attention: sent again after a transient failure ("
                        + (TransientFailure.reason(in: failure) ?? "HTTP \(failure.status)")
                        + "): needsAttention/ → queued/")
            }
        transition.moves = chosen.map { .init($0.0, from: .needsAttention, to: .queued) }
        // One a person settled meanwhile stays where they put it.
        return chosen.count - (try session.commit(transition)).vanished.count
    }

    private static func ledgerKey(_ subscriber: String, _ key: String) -> String { subscriber + "\t" + key }
}
