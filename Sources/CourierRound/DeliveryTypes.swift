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
    /// The generation of the OAuth token it was sent with (`OAuthTokens`).
    var tokenGeneration = 0
    /// Sent again after a 401 with a new OAuth token: another 401 is final.
    var reauthorised = false
}
