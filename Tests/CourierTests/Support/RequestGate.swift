import Foundation

/// Holds a loopback server's requests from the nth on until the test opens
/// the gate: a test that must act in the middle of a run (kill -9 it, say)
/// acts while requests are provably in flight, not after a guessed sleep.
final class RequestGate: @unchecked Sendable {
    /// Guards every field below.
    private let condition = NSCondition()
    private var arrived = 0
    private var holdFrom = Int.max
    private var isOpen = true
    /// However a test fails, a held handler goes on after this long.
    private static let patience: TimeInterval = 60

    /// How many requests have reached the gate.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return arrived
    }

    /// Holds the `n`th request from now, and every later one, until `open()`.
    func hold(after n: Int) {
        condition.lock()
        defer { condition.unlock() }
        holdFrom = arrived + n
        isOpen = false
    }

    /// For the server's handler: counts the request, and waits while the
    /// gate holds it.
    func pass() {
        condition.lock()
        defer { condition.unlock() }
        arrived += 1
        let index = arrived
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: Self.patience)
        while index >= holdFrom && !isOpen {
            if !condition.wait(until: deadline) { break }
        }
    }

    /// Waits until the first held request has arrived; false if it did not
    /// within the patience.
    func waitUntilHolding() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: Self.patience)
        while arrived < holdFrom {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    /// Lets every held request, and every later one, go on.
    func open() {
        condition.lock()
        defer { condition.unlock() }
        isOpen = true
        condition.broadcast()
    }
}
