import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierRecords
import CourierSpool
import CourierTransport

/// A claimed entry and the bytes that will be POSTed.
///
/// A class with nothing to change: an item goes into the feed, its
/// request, a retry and its verdict, several copies per record, and a
/// copy of a reference is one retain rather than one per field.
final class DeliveryItem: Sendable {
    let entry: EntryName
    let body: [UInt8]
    /// What the record's one parse, at intake or at the claim, found of
    /// its `op`, entity and version: the request's `If-Match` and batch
    /// item, and the entity an etag is kept for, without reading the body
    /// again.
    let fields: OutboxFields
    /// Its deferral stamp when `retry-schedule` has put it off before.
    let stamp: DeferralStamp?

    init(entry: EntryName, body: [UInt8], fields: OutboxFields, stamp: DeferralStamp? = nil) {
        self.entry = entry
        self.body = body
        self.fields = fields
        self.stamp = stamp
    }

    /// The same item with the stamp its entry had in `queued/`.
    func stamped(_ stamp: DeferralStamp?) -> DeliveryItem {
        guard let stamp else { return self }
        return DeliveryItem(entry: entry, body: body, fields: fields, stamp: stamp)
    }
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
    /// A retry's: the answer the attempt before got, by which it is
    /// settled if the round stops trying (the breaker).
    var lastResponse: DeliveryResponse?
}
