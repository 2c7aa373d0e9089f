@testable import CourierPosix

/// A clock that moves only when the scripted transport says time passed.
final class FakeClock {
    private(set) var now = MonotonicInstant(nanoseconds: 1_000_000_000)
    func advance(by duration: Duration) { now = now + max(duration, .zero) }
}
