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

    func collect(wait: Duration) throws(CurlError) -> [(tag: Int, response: DeliveryResponse)] {
        guard !pending.isEmpty else {
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
