import Glibc

/// A point in UTC wall-clock time with nanosecond resolution.
package struct Timestamp: Comparable, Hashable, Sendable {
    package let nanosecondsSinceEpoch: Int64

    package init(nanosecondsSinceEpoch: Int64) { self.nanosecondsSinceEpoch = nanosecondsSinceEpoch }

    /// Clamped to what nanoseconds in an Int64 can hold (years 1677–2262):
    /// a hostile timestamp must not trap.
    package init(secondsSinceEpoch: Int64) {
        let (product, overflow) = secondsSinceEpoch.multipliedReportingOverflow(by: 1_000_000_000)
        self.nanosecondsSinceEpoch = overflow ? (secondsSinceEpoch < 0 ? .min : .max) : product
    }

    /// A stat(2) time, clamped the same way: `touch -d 3000-01-01` gives a
    /// file a time past 2262, and reading it must not trap.
    package init(secondsSinceEpoch seconds: Int64, nanoseconds: Int64) {
        let whole = Timestamp(secondsSinceEpoch: seconds).nanosecondsSinceEpoch
        let (sum, overflow) = whole.addingReportingOverflow(nanoseconds)
        self.nanosecondsSinceEpoch = overflow ? (nanoseconds < 0 ? .min : .max) : sum
    }

    package static func now() -> Timestamp {
        var now = Glibc.timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Timestamp(nanosecondsSinceEpoch: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }

    /// Rounded down, also before 1970; quotient and remainder rather than
    /// an offset, which would overflow near `Int64.min` (a clamped time).
    package var secondsSinceEpoch: Int64 {
        let (seconds, rest) = nanosecondsSinceEpoch.quotientAndRemainder(dividingBy: 1_000_000_000)
        return rest < 0 ? seconds - 1 : seconds
    }

    /// The nanoseconds past `secondsSinceEpoch`, 0 ..< 1,000,000,000.
    package var nanosecondOfSecond: Int64 {
        let rest = nanosecondsSinceEpoch % 1_000_000_000
        return rest < 0 ? rest + 1_000_000_000 : rest
    }

    var timespec: Glibc.timespec {
        Glibc.timespec(tv_sec: Int(secondsSinceEpoch), tv_nsec: Int(nanosecondOfSecond))
    }

    package static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }

    // The arithmetic saturates: times come from clients and from files
    // (a clamped year-3000 mtime minus now must not trap), and a result
    // clamped at ±292 years compares the same way the true one would.

    package static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(nanosecondsSinceEpoch: saturating(lhs.nanosecondsSinceEpoch.addingReportingOverflow(rhs.nanoseconds)))
    }

    package static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(
            nanosecondsSinceEpoch: saturating(lhs.nanosecondsSinceEpoch.subtractingReportingOverflow(rhs.nanoseconds)))
    }

    package static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        .nanoseconds(
            saturating(lhs.nanosecondsSinceEpoch.subtractingReportingOverflow(rhs.nanosecondsSinceEpoch)))
    }

    /// An overflowed sum or difference wrapped around, so its sign is the
    /// opposite of the true result's.
    private static func saturating(_ result: (partialValue: Int64, overflow: Bool)) -> Int64 {
        guard result.overflow else { return result.partialValue }
        return result.partialValue < 0 ? .max : .min
    }
}

/// A monotonic instant, for durations and deadlines inside one process.
package struct MonotonicInstant: Comparable, Sendable {
    package let nanoseconds: Int64

    package static func now() -> MonotonicInstant {
        var now = Glibc.timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return MonotonicInstant(nanoseconds: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }

    package static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    package static func + (lhs: MonotonicInstant, rhs: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: lhs.nanoseconds + rhs.nanoseconds)
    }

    package static func - (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Duration {
        .nanoseconds(lhs.nanoseconds - rhs.nanoseconds)
    }

    /// Sleeps until `deadline` (at once if it has passed); a signal that
    /// interrupts the sleep does not cut it short.
    package static func sleep(until deadline: MonotonicInstant) {
        var target = Glibc.timespec(
            tv_sec: Int(deadline.nanoseconds / 1_000_000_000), tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }
}

extension Duration {
    /// Whole nanoseconds; courier's durations are far below the range limit.
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    package var milliseconds: Int64 { nanoseconds / 1_000_000 }
}
