import Glibc

@testable import CourierConfig
@testable import CourierTransport

/// A transport that answers from a script, at once: no sockets, no sleeps.
/// Each `collect` finishes up to `perCollect` of the started requests and
/// moves the clock by a millisecond; with nothing started it moves the
/// clock by the whole wait, as a real wait would.
final class ScriptedTransport: Transport {
    let clock: FakeClock
    let perCollect: Int
    /// The answer to a request; the Int counts the requests with its key so far.
    let answer: (DeliveryRequest, Int) -> DeliveryResponse
    private(set) var started: [DeliveryRequest] = []
    private var pending: [(tag: Int, request: DeliveryRequest)] = []
    private var counts: [String: Int] = [:]

    init(clock: FakeClock, perCollect: Int = .max, answer: @escaping (DeliveryRequest, Int) -> DeliveryResponse) {
        self.clock = clock
        self.perCollect = perCollect
        self.answer = answer
    }

    func start(_ request: DeliveryRequest, headers: HeaderLines, tag: Int) throws(CurlError) {
        started.append(request)
        pending.append((tag, request))
    }

    /// With `signal` (a commit out on the round's thread) and nothing
    /// started, it waits for the signal for real, as long as `wait` on
    /// the wall clock, and the fake clock moves by a millisecond if it
    /// came.
    func collect(wait: Duration, signal: Int32?) throws(CurlError) -> [(tag: Int, response: DeliveryResponse)] {
        guard !pending.isEmpty else {
            if let signal {
                var watched = pollfd(fd: signal, events: Int16(POLLIN), revents: 0)
                if poll(&watched, 1, Int32(clamping: wait.milliseconds)) > 0 {
                    clock.advance(by: .milliseconds(1))
                    return []
                }
            }
            clock.advance(by: wait)
            return []
        }
        clock.advance(by: .milliseconds(1))
        let done = pending.prefix(perCollect)
        pending.removeFirst(done.count)
        return done.map { tag, request in
            counts[request.key, default: 0] += 1
            return (tag, answer(request, counts[request.key] ?? 1))
        }
    }

    static func response(_ status: Int, _ body: String = "{}", error: CurlError? = nil) -> DeliveryResponse {
        DeliveryResponse(
            status: error == nil ? status : 0, error: error, retryAfter: nil, answer: Array(body.utf8),
            duration: .milliseconds(1))
    }
}
