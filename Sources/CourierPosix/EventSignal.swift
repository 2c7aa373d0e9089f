import CPosix
import Glibc

/// A signal one thread raises and another waits for with `poll(2)`, beside
/// its sockets (an eventfd): readable from `raise` until `clear`.
package final class EventSignal: @unchecked Sendable {
    /// The file descriptor to poll for reading.
    package let descriptor: Int32

    /// Nil when the system gives no eventfd (its limit on open files).
    package init?() {
        let descriptor = courier_eventfd()
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    package func raise() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }

    /// Not readable any more (until the next `raise`).
    package func clear() {
        var count: UInt64 = 0
        _ = read(descriptor, &count, 8)
    }
}
