import CourierConfig
import CourierIdentifiers
import CourierSpool
import CourierTransport

/// The circuit breaker inside a round (Svix's and Hook0's "endpoint
/// disabled", for one round only): after `breaker` requests to a subscriber
/// in a row got no answer at all (a network error or a timeout), the round
/// starts no more requests to it. A subscriber that hangs then costs about
/// one timeout, not one per `concurrency` of its queued entries, and does
/// not keep the spool lock for the length of its queue. Any HTTP answer,
/// even a 503, shows the subscriber is there and starts the count again:
/// those are for `retry-schedule` to space out.
struct Breaker {
    private let limits: SubscriberTable<Int>
    private var silent = SubscriberTable<Int>()

    init(_ settings: BreakerSettings) { limits = settings.limits }

    /// The limit in force for a subscriber; nil: no breaker.
    func limit(for subscriber: SubscriberName) -> Int? { limits[subscriber] }

    /// Counts a finished request; true when it is the one that opens the
    /// breaker. A failure no retry fixes (a certificate that does not
    /// verify) is quick and says nothing about the subscriber's health, so
    /// it neither counts nor resets.
    mutating func record(_ response: DeliveryResponse, for subscriber: SubscriberName) -> Bool {
        guard let limit = limits[subscriber] else { return false }
        if response.status != 0 {
            // Nothing to reset on a healthy round: no second lookup per answer.
            if !silent.isEmpty { silent[subscriber] = nil }
            return false
        }
        guard let error = response.error, !error.needsPerson else { return false }
        let count = silent[subscriber, default: 0] + 1
        silent[subscriber] = count
        return count == limit
    }
}
