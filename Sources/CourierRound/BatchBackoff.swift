/// How long a batch waits before it is tried again in a foreground round
/// (docs/design.md §8): exponential backoff from the first `backoff` step,
/// with equal jitter, at most five minutes. A batch server is one endpoint
/// that a whole fleet of devices comes back to after an outage; the
/// jitter keeps their retries from arriving in step.
enum BatchBackoff {
    /// The longest wait: as long as the longest Retry-After courier honours.
    static let cap: Duration = .seconds(300)

    /// The wait before attempt `attempt + 1`: a ceiling of
    /// `base · 2^(attempt−1)`, capped, and a wait between half the ceiling
    /// and all of it (`jitter` in 0…1 picks where). Equal jitter rather than
    /// full jitter: a retry never comes back at once.
    static func delay(attempt: Int, base: Duration, jitter: Double) -> Duration {
        var ceiling = max(base, .zero)
        var doublings = max(0, attempt - 1)
        while doublings > 0 && ceiling < cap {
            ceiling = ceiling * 2
            doublings -= 1
        }
        let half = min(ceiling, cap) / 2
        return half + half * min(max(jitter, 0), 1)
    }
}
