import CourierConfig
import CourierPosix
import CourierSpool

/// A claimed entry and the bytes that will be POSTed.
struct DeliveryItem {
    let entry: EntryName
    let body: [UInt8]
}

/// One POST: a single item, or a batch, with its attempt number and the
/// time it may go (later than now while it waits out a backoff).
struct PendingRequest {
    let items: [DeliveryItem]
    let subscriber: Subscriber
    var attempt: Int
    var due: MonotonicInstant
}
