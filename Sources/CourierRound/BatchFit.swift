import CourierTransport

/// `max-batch-bytes` as a limit, not a hint: a batch being filled counts
/// the exact bytes each item adds to its body (`BatchBody.size`), so no
/// body passes it; an item that would starts the next batch, and one that
/// passes it alone cannot be sent in a batch at all.
struct BatchFit {
    let limit: Int
    let deviceID: String
    /// The body so far, its envelope included once an item is in: the
    /// pass makes a fit for every request, and a single subscriber's never
    /// get an item (the envelope's size costs a few allocations).
    private(set) var bytes = 0

    init(limit: Int, deviceID: String) {
        self.limit = limit
        self.deviceID = deviceID
    }

    enum Verdict: Equatable {
        case added
        /// It fits a batch of its own: the next one.
        case full
        /// It needs attention for this reason.
        case refused(String)
    }

    /// Before an entry is claimed: whether it may fit, by its file's size
    /// and a guess at the rest of its item.
    func mayHold(recordSize: Int, key: String) -> Bool {
        bytes + 1 + recordSize + key.utf8.count + BatchBody.overheadPerItem <= limit
    }

    mutating func add(_ item: DeliveryItem, first: Bool) -> Verdict {
        let batchItem = BatchBody.Item(key: item.entry.key.description, record: item.body, fields: item.fields)
        if bytes == 0 { bytes = BatchBody.envelopeSize(deviceID: deviceID) }
        let added = batchItem.size + (first ? 0 : 1)
        guard bytes + added <= limit else {
            guard first else { return .full }
            return .refused(
                "as a batch item it makes a body of \(bytes + added) bytes, over max-batch-bytes "
                    + "(\(limit)); it cannot be sent to \(item.entry.subscriber)")
        }
        bytes += added
        return .added
    }
}
