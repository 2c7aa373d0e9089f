import CourierPosix
import CourierSpool

/// How old an item is: the time since it was taken in (`IntakeTimes`).
package enum ItemAge {
    /// From `intake` to `now`; never negative (a clock set back makes an
    /// item new, not younger than new).
    package static func age(sinceIntake intake: Timestamp, now: Timestamp) -> Duration {
        max(.zero, now - intake)
    }
}
