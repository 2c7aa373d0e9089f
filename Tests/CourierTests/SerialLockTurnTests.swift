import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierSpool
@testable import CourierSupport

/// The serial lock is asked for again without blocking (a blocking flock
/// can go unanswered on GlusterFS), which keeps no queue: a holder that
/// lets it go and asks again at once, as a round streaming dropped files
/// in does between intake holds, would win every time. Whoever asks
/// waits in its turnstile first, so the holder asking again queues
/// behind the one waiting.
@Suite struct SerialLockTurnTests {
    /// Whether a process waits in the turnstile now (holds it).
    static func someoneWaits(in spool: TemporarySpool) -> Bool {
        let path = spool.path + "/.courier/" + Spool.serialTurnstileName.description
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    @Test(
        "a holder that lets the serial lock go and asks again at once waits until the process that was waiting had its turn"
    )
    func aWaiterGetsItsTurn() throws {
        let spool = try TemporarySpool()
        let holder = try Spool(path: spool.path)
        var held: SerialLock? = try holder.serialLock()
        let waiterHadIt = Locked(false)
        let waiterFailed = Locked<String?>(nil)
        let waiterDone = DispatchSemaphore(value: 0)
        let path = spool.path
        Thread {
            defer { waiterDone.signal() }
            do {
                let lock = try Spool(path: path).serialLock()
                waiterHadIt.withLock { $0 = true }
                withExtendedLifetime(lock) {}
            } catch {
                waiterFailed.withLock { $0 = "\(error)" }
            }
        }.start()
        // However loaded the machine, the waiter is queued before the
        // holder lets go.
        let deadline = Date().addingTimeInterval(30)
        while !Self.someoneWaits(in: spool) && Date() < deadline { usleep(1_000) }
        try #require(Self.someoneWaits(in: spool), "the waiter never waited in the turnstile")
        #expect(!waiterHadIt.withLock { $0 })

        held = nil
        held = try holder.serialLock()
        #expect(waiterHadIt.withLock { $0 }, "the holder took the lock back before the waiter had it")
        withExtendedLifetime(held) {}
        held = nil
        waiterDone.wait()
        #expect(waiterFailed.withLock { $0 } == nil)
    }

    @Test("a lock asked for again is not had while another holds it, and is had soon after it is let go")
    func askingAgainWaitsForTheHolder() throws {
        let spool = try TemporarySpool()
        let path = spool.path + "/.courier/asked.lock"
        let holder = open(path, O_RDWR | O_CREAT, 0o600)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX) == 0)
        let had = Locked(false)
        let done = DispatchSemaphore(value: 0)
        Thread {
            defer { done.signal() }
            let asker = FileDescriptor(owning: open(path, O_RDWR), path: path)
            guard (try? asker.lockExclusivelyAskingAgain()) != nil else { return }
            had.withLock { $0 = true }
        }.start()
        // However long it asks, it is refused while the holder holds.
        #expect(done.wait(timeout: .now() + .milliseconds(300)) == .timedOut)
        #expect(!had.withLock { $0 })
        flock(holder, LOCK_UN)
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(had.withLock { $0 })
    }

    @Test("taking the serial lock with nobody waiting leaves the turnstile free")
    func theTurnstileIsFreeAfterwards() throws {
        let spool = try TemporarySpool()
        let lock = try Spool(path: spool.path).serialLock()
        #expect(!Self.someoneWaits(in: spool))
        withExtendedLifetime(lock) {}
    }
}
