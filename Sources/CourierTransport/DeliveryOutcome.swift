import CourierPosix

/// What one attempt means for an item — qmail-remote's K, Z and D.
package enum DeliveryOutcome: Sendable, Equatable {
    /// 2xx: the subscriber has it.
    case delivered(status: Int)
    /// Worth another try: no answer, a timeout, 408, 429 or 5xx. `after` is
    /// the server's Retry-After, already capped.
    case retryLater(reason: String, after: Duration?)
    /// Trying again will not help; a person must look.
    case needsAttention(reason: String)

    /// The longest Retry-After honoured; a server asking for more is
    /// asking for a person (the item goes to needsAttention/ when retries run out).
    package static let retryAfterCap: Duration = .seconds(300)

    /// The one mapping from an answer to an outcome (docs/design.md §3).
    package static func classify(status: Int, error: CurlError?, retryAfter: Duration? = nil) -> DeliveryOutcome {
        if let error, status == 0 {
            if error.needsPerson { return .needsAttention(reason: error.message) }
            return .retryLater(reason: error.isTimeout ? "timeout: \(error.message)" : error.message, after: nil)
        }
        switch status {
        case 200...299:
            return .delivered(status: status)
        case 408, 429, 500...599:
            return .retryLater(reason: "HTTP \(status)", after: retryAfter.map { min($0, retryAfterCap) })
        case 300...399:
            return .needsAttention(reason: "HTTP \(status): redirects are not followed; point url at the final address")
        default:
            return .needsAttention(reason: "HTTP \(status)")
        }
    }
}

/// `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
package enum RetryAfter {
    package static func parse(_ value: String, now: Timestamp) -> Duration? {
        let text = value.trimmingSpaces
        if let seconds = Int64(text), seconds >= 0 { return .seconds(seconds) }
        guard let date = httpDate(text) else { return nil }
        let wait = date - now
        return wait > .zero ? wait : .zero
    }

    /// IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, the only form servers
    /// are allowed to send.
    static func httpDate(_ text: String) -> Timestamp? {
        let parts = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]),
            let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            hour < 24, minute < 60, second < 61,
            let midnight = Timestamp.dayStart(year: year, month: month + 1, day: day)
        else { return nil }
        return midnight + .seconds(hour * 3600 + minute * 60 + second)
    }
}
