import CCurl
import CourierConfig
import CourierPosix

/// The version courier reports in User-Agent and `--version`.
package enum CourierVersion {
    package static let current = "0.1.0"
}

/// An HTTP client on one curl multi handle: every transfer of a round
/// shares its connection cache (keep-alive, HTTP/2 multiplexing where the
/// server offers it over TLS). Single-threaded: the round's loop drives it.
package final class HTTPClient: Transport {
    private let multi: CurlMulti
    private var idle: [CurlEasy] = []
    private var running: [UnsafeMutableRawPointer: Transfer] = [:]
    private let timeout: Duration

    /// Bytes of an answer courier reads before it hangs up: enough for any
    /// acknowledgement, and an endless body cannot hold a slot forever.
    static let answerLimit = 64 * 1024

    package init(timeout: Duration) throws(CurlError) {
        self.multi = try CurlMulti()
        self.timeout = timeout
    }

    var activeCount: Int { running.count }

    /// Starts a POST with its checked header lines (`DeliveryHeaders`); its
    /// response comes out of `collect` with `tag`.
    package func start(_ request: DeliveryRequest, headers: HeaderLines, tag: Int) throws(CurlError) {
        let easy: CurlEasy
        if let reused = idle.popLast() { easy = reused } else { easy = try CurlEasy() }
        let transfer = Transfer(
            easy: easy, tag: tag, headers: CurlHeaderList(headers), capture: request.answerCapture)
        do {
            try configure(easy, for: request, transfer: transfer)
            try multi.add(easy)
        } catch {
            easy.reset()
            idle.append(easy)
            throw error
        }
        running[easy.handle] = transfer
    }

    /// Drives transfers for at most `wait`; returns those that finished.
    /// With nothing in flight it sleeps out `wait`: the round's loop asks for
    /// exactly the time until its next retry is due, and must not spin.
    package func collect(wait: Duration) throws(CurlError) -> [(tag: Int, response: DeliveryResponse)] {
        let deadline = MonotonicInstant.now() + wait
        while true {
            _ = try multi.perform()
            let done = multi.finished()
            if !done.isEmpty { return done.compactMap(finish) }
            if running.isEmpty {
                MonotonicInstant.sleep(until: deadline)
                return []
            }
            let remaining = deadline - MonotonicInstant.now()
            if remaining <= .zero { return [] }
            try multi.poll(timeout: min(remaining, .seconds(1)))
        }
    }

    private func finish(_ done: (easy: UnsafeMutableRawPointer, result: CURLcode)) -> (
        tag: Int, response: DeliveryResponse
    )? {
        guard let transfer = running.removeValue(forKey: done.easy) else { return nil }
        let easy = transfer.easy
        multi.remove(easy)
        let status = easy.responseCode()
        var error: CurlError?
        // An answer cut short on purpose still has its status line.
        if done.result != CURLE_OK && !(done.result == CURLE_WRITE_ERROR && transfer.answerTooLong && status > 0) {
            error = CurlError(done.result, detail: transfer.errorText)
        }
        let response = DeliveryResponse(
            status: error == nil ? status : 0, error: error, retryAfter: easy.header("Retry-After"),
            answer: transfer.answer, duration: MonotonicInstant.now() - transfer.started)
        easy.reset()
        idle.append(easy)
        return (transfer.tag, response)
    }

    private func configure(_ easy: CurlEasy, for request: DeliveryRequest, transfer: Transfer) throws(CurlError) {
        // TLS, redirects, protocols and timeouts: the same rules as catalogs.
        try CurlOptions(timeout: timeout, caFile: request.subscriber.caFile).apply(
            to: easy, errorBuffer: transfer.errorBuffer)
        try easy.set(CURLOPT_URL, request.url)
        try easy.setPostBody(request.body)
        try easy.set(CURLOPT_HTTPHEADER, list: transfer.headers.list)
        try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(transfer).toOpaque())
        try easy.set(
            CURLOPT_WRITEFUNCTION,
            writer: { data, size, count, context in
                guard let context else { return 0 }
                let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
                let length = size * count
                if let data, transfer.answer.count < transfer.capture {
                    let wanted = min(length, transfer.capture - transfer.answer.count)
                    data.withMemoryRebound(to: UInt8.self, capacity: wanted) { bytes in
                        transfer.answer.append(contentsOf: UnsafeBufferPointer(start: bytes, count: wanted))
                    }
                }
                transfer.answerBytes += length
                if transfer.answerBytes > max(HTTPClient.answerLimit, transfer.capture) {
                    transfer.answerTooLong = true
                    return 0
                }
                return length
            })
    }
}

/// The state of one transfer in flight; the write callback's context.
private final class Transfer {
    let easy: CurlEasy
    let tag: Int
    let headers: CurlHeaderList
    let capture: Int
    let started = MonotonicInstant.now()
    var answer: [UInt8] = []
    var answerBytes = 0
    var answerTooLong = false
    /// CURLOPT_ERRORBUFFER: curl's detailed words for a failure.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    init(easy: CurlEasy, tag: Int, headers: CurlHeaderList, capture: Int) {
        self.easy = easy
        self.tag = tag
        self.headers = headers
        self.capture = capture
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit { errorBuffer.deallocate() }

    var errorText: String { String(cString: errorBuffer) }
}
