import CourierConfig
import CourierPosix
import CourierSpool

/// The feed of a delivery pass: `queued/` read in directory order, only as
/// far ahead as free slots and batches need, the names kept per subscriber.
/// Bounded, so a million queued items never sit in memory at once.
final class DeliveryFeed {
    private let stream: DirectoryStream
    private var buffered: [SubscriberName: [EntryName]] = [:]
    private(set) var done = false
    private(set) var count = 0

    /// Entries read ahead of free slots.
    static let limit = 4096

    init(spool: Spool) throws(RoundError) {
        do { stream = try spool.directory(.queued).entries() } catch {
            throw .spool(SpoolError(error))
        }
    }

    var isEmpty: Bool { done && count == 0 }
    /// Nothing more will be read this time: the end, or the read-ahead limit.
    var isSaturated: Bool { done || count >= Self.limit }

    func waiting(for subscriber: SubscriberName) -> Int { buffered[subscriber]?.count ?? 0 }

    func peek(_ subscriber: SubscriberName) -> EntryName? { buffered[subscriber]?.first }

    func take(_ subscriber: SubscriberName) -> EntryName? {
        guard var queue = buffered[subscriber], !queue.isEmpty else { return nil }
        let entry = queue.removeFirst()
        buffered[subscriber] = queue
        count -= 1
        return entry
    }

    /// Forgets the entries read ahead for a subscriber the round stopped
    /// sending to; they stay in `queued/`. Returns how many.
    func discard(_ subscriber: SubscriberName) -> Int {
        let dropped = buffered.removeValue(forKey: subscriber)?.count ?? 0
        count -= dropped
        return dropped
    }

    /// Reads names while `hungry` says a subscriber could use more. Names
    /// that are not entries are intake's; entries whose subscriber is not
    /// configured go to `unconfigured`; entries `admit` turns down stay in
    /// `queued/` (it counts them).
    func fill(
        while hungry: () -> Bool, isConfigured: (SubscriberName) -> Bool,
        unconfigured: (EntryName) throws(RoundError) -> Void, admit: (EntryName) -> Bool = { _ in true }
    ) throws(RoundError) {
        while !done && count < Self.limit && hungry() {
            let name: FileName?
            do { name = try stream.next() } catch { throw .spool(SpoolError(error)) }
            guard let name else {
                done = true
                return
            }
            guard let entry = EntryName(fileName: name) else { continue }
            guard isConfigured(entry.subscriber) else {
                try unconfigured(entry)
                continue
            }
            guard admit(entry) else { continue }
            buffered[entry.subscriber, default: []].append(entry)
            count += 1
        }
    }
}
