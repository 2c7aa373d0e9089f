import Foundation
import Glibc
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierTransport

/// The loop's wait for answers ends when the commit thread raises its
/// signal (`EventSignal`), whether or not requests are in flight: an
/// intake group's entries start as soon as its commit is done, not at the
/// next answer or the end of the wait.
@Suite(.tags(.integration)) struct CommitSignalTests {
    /// Raises `signal` from another thread after 200 ms.
    static func raiseSoon(_ signal: EventSignal) {
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.2)
            signal.raise()
        }
    }

    @Test("with nothing in flight a wait for answers ends when the signal is raised, not after its 8 s")
    func anIdleWaitEndsAtTheSignal() throws {
        let client = try HTTPClient(timeout: .seconds(10))
        let signal = try #require(EventSignal())
        let started = MonotonicInstant.now()
        Self.raiseSoon(signal)
        #expect(try client.collect(wait: .seconds(8), signal: signal.descriptor).isEmpty)
        let elapsed = MonotonicInstant.now() - started
        #expect(elapsed < .seconds(5), "returned after \(elapsed)")
    }

    @Test("with a request in flight and unanswered a wait for answers ends when the signal is raised")
    func aWaitBesideARequestEndsAtTheSignal() throws {
        let stalling = try LoopbackServer { _, _ in .stall(.seconds(9)) }
        let client = try HTTPClient(timeout: .seconds(10))
        try client.start(
            try ReusedHandleTests.request("held", to: stalling.url),
            headers: try ReusedHandleTests.headers(key: "held"),
            tag: 1)
        let signal = try #require(EventSignal())
        let started = MonotonicInstant.now()
        Self.raiseSoon(signal)
        var answered: [Int] = []
        // curl may return once early, as it connects: look again until the
        // signal ends a wait or 8 s have passed.
        while MonotonicInstant.now() - started < .seconds(8) {
            answered += try client.collect(wait: .seconds(8), signal: signal.descriptor).map(\.tag)
            var readable = pollfd(fd: signal.descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&readable, 1, 0) == 1 { break }
        }
        let elapsed = MonotonicInstant.now() - started
        #expect(answered.isEmpty, "the stalled request was answered")
        #expect(elapsed < .seconds(5), "returned after \(elapsed)")
    }
}
