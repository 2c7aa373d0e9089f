import Glibc

/// A value behind a pthread mutex, shared between threads.
///
/// `Synchronization.Mutex` would do, but on Linux it locks with raw futex
/// calls that ThreadSanitizer cannot see, so every access it guards is
/// reported as a race; a pthread mutex keeps `scripts/sanitize.sh thread`
/// meaningful.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
