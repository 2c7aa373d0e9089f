import Glibc

/// A point in UTC wall-clock time with nanosecond resolution.
public struct Timestamp: Comparable, Hashable, Sendable {
    public let nanosecondsSinceEpoch: Int64

    public init(nanosecondsSinceEpoch: Int64) { self.nanosecondsSinceEpoch = nanosecondsSinceEpoch }

    /// Clamped to what nanoseconds in an Int64 can hold (years 1677–2262):
    /// a hostile timestamp must not trap.
    public init(secondsSinceEpoch: Int64) {
        let (product, overflow) = secondsSinceEpoch.multipliedReportingOverflow(by: 1_000_000_000)
        self.nanosecondsSinceEpoch = overflow ? (secondsSinceEpoch < 0 ? .min : .max) : product
    }

    public static func now() -> Timestamp {
        var now = Glibc.timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Timestamp(nanosecondsSinceEpoch: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }

    public var secondsSinceEpoch: Int64 {
        nanosecondsSinceEpoch >= 0
            ? nanosecondsSinceEpoch / 1_000_000_000 : (nanosecondsSinceEpoch - 999_999_999) / 1_000_000_000
    }

    var timespec: Glibc.timespec {
        Glibc.timespec(
            tv_sec: Int(secondsSinceEpoch), tv_nsec: Int(nanosecondsSinceEpoch - secondsSinceEpoch * 1_000_000_000))
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }

    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(nanosecondsSinceEpoch: lhs.nanosecondsSinceEpoch + rhs.nanoseconds)
    }

    public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(nanosecondsSinceEpoch: lhs.nanosecondsSinceEpoch - rhs.nanoseconds)
    }

    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        .nanoseconds(lhs.nanosecondsSinceEpoch - rhs.nanosecondsSinceEpoch)
    }
}

/// A monotonic instant, for durations and deadlines inside one process.
public struct MonotonicInstant: Comparable, Sendable {
    public let nanoseconds: Int64

    public static func now() -> MonotonicInstant {
        var now = Glibc.timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return MonotonicInstant(nanoseconds: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public static func + (lhs: MonotonicInstant, rhs: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: lhs.nanoseconds + rhs.nanoseconds)
    }

    public static func - (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Duration {
        .nanoseconds(lhs.nanoseconds - rhs.nanoseconds)
    }
}

extension Duration {
    /// Whole nanoseconds; courier's durations are far below the range limit.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    public var milliseconds: Int64 { nanoseconds / 1_000_000 }
}
