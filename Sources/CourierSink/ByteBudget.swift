import CourierSupport

/// The request bytes all connections of one server hold, against a cap:
/// a connection reserves before it reads, and gives back when the request
/// is done, so memory stays bounded whatever the clients announce.
final class ByteBudget: Sendable {
    let limit: Int
    private let counts = Locked((held: 0, peak: 0))

    init(limit: Int) { self.limit = limit }

    /// False, reserving nothing, when `count` more would pass the cap.
    func reserve(_ count: Int) -> Bool {
        counts.withLock { counts in
            // Subtracted rather than added: neither side can overflow.
            guard count <= limit - counts.held else { return false }
            counts.held += count
            counts.peak = max(counts.peak, counts.held)
            return true
        }
    }

    func release(_ count: Int) {
        counts.withLock { $0.held -= count }
    }

    var held: Int { counts.withLock { $0.held } }

    /// The most ever held at once.
    var peak: Int { counts.withLock { $0.peak } }
}
