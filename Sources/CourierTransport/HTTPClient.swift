import CCurl
import CourierConfig
import CourierPosix
import Glibc

/// The version courier reports in User-Agent and `--version`.
package enum CourierVersion {
    package static let current = "0.1.0"
}

/// An HTTP client on one curl multi handle: every transfer of a round
/// shares its connection cache (keep-alive, HTTP/2 multiplexing where the
/// server offers it over TLS). Single-threaded: the round's loop drives it.
package final class HTTPClient: Transport {
    private let multi: CurlMulti
    /// Handles whose transfer finished, set up for the next (`DeliveryHandle`).
    private var idle: [DeliveryHandle] = []
    private var running: [UnsafeMutableRawPointer: Transfer] = [:]
    private let timeout: Duration
    private let proxy: ProxyLookup
    /// Each URL requested, parsed once (`parsedURL`).
    private var parsedURLs: [String: CurlURL] = [:]
    private var lastURL: CurlURL?
    static let parsedURLLimit = 64

    /// Bytes of an answer courier reads before it hangs up: enough for any
    /// acknowledgement, and an endless body cannot hold a slot forever.
    static let answerLimit = 64 * 1024

    /// `proxy`: the process's proxy variables, looked at once here
    /// (`ProxyLookup`) rather than by libcurl at every request.
    package init(timeout: Duration, proxy: ProxyLookup = .ofProcess()) throws(CurlError) {
        self.multi = try CurlMulti()
        self.timeout = timeout
        self.proxy = proxy
    }

    var activeCount: Int { running.count }

    /// Handles kept for the next requests; for tests, which check that a
    /// second request over a handle keeps the rules the first one had.
    var idleCount: Int { idle.count }

    /// Starts a POST with its checked header lines (`DeliveryHeaders`); its
    /// response comes out of `collect` with `tag`.
    package func start(_ request: DeliveryRequest, headers: HeaderLines, tag: Int) throws(CurlError) {
        // TLS, redirects, protocols and timeouts: the same rules as catalogs.
        let handle = try self.handle(
            for: CurlOptions(timeout: timeout, caFile: request.subscriber.caFile, proxy: proxy))
        let url = parsedURL(request.url)
        let transfer = Transfer(
            handle: handle, tag: tag, url: url, headers: CurlHeaderList(headers), capture: request.answerCapture)
        do {
            // Only what is this request's own; every request sets all of
            // it, so nothing of the handle's last transfer is left to use.
            let easy = handle.easy
            // One of the two, the other unset: the parsed URL wins over a
            // string for the request, but a string left from an earlier
            // one is what libcurl retries a request from when its reused
            // connection died unanswered.
            try easy.set(CURLOPT_CURLU, pointer: url.map { UnsafeMutableRawPointer($0.handle) })
            if url == nil {
                try easy.set(CURLOPT_URL, request.url)
            } else {
                try easy.set(CURLOPT_URL, pointer: nil)
            }
            try easy.setPostBody(request.body)
            try easy.set(CURLOPT_HTTPHEADER, list: transfer.headers.list)
            try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(transfer).toOpaque())
            try easy.set(CURLOPT_OPENSOCKETDATA, pointer: Unmanaged.passUnretained(transfer).toOpaque())
            try multi.add(easy)
        } catch {
            idle.append(handle)
            throw error
        }
        running[handle.easy.handle] = transfer
    }

    /// The request's URL as libcurl parsed it the first time (`CurlURL`);
    /// nil when it cannot, and the string is set instead. A round sends to
    /// a few URLs, one per subscriber; `parsedURLLimit` bounds a client
    /// that is given ever new ones.
    private func parsedURL(_ text: String) -> CurlURL? {
        // The last one first: the same storage compares equal without a
        // hash, and a round's requests mostly go to one subscriber's URL.
        if let last = lastURL, last.text == text { return last }
        if let known = parsedURLs[text] {
            lastURL = known
            return known
        }
        guard let url = CurlURL(text) else { return nil }
        if parsedURLs.count >= Self.parsedURLLimit { parsedURLs.removeAll() }
        parsedURLs[text] = url
        lastURL = url
        return url
    }

    /// An idle handle that follows `options` (the last one, nearly always:
    /// a client's requests differ in their CA file only across
    /// subscribers), else one set up anew, else a new one.
    private func handle(for options: CurlOptions) throws(CurlError) -> DeliveryHandle {
        if let last = idle.last, last.options == options { return idle.removeLast() }
        if let index = idle.lastIndex(where: { $0.options == options }) { return idle.remove(at: index) }
        // A handle that fails to be set up again is dropped, not kept half set.
        if let other = idle.popLast() {
            try other.use(options)
            return other
        }
        return try DeliveryHandle(options, writer: Self.write, opener: Self.openSocket)
    }

    /// Drives transfers for at most `wait`, or until `signal` is readable
    /// (the round's commit thread finished a commit); returns those that
    /// finished. With nothing in flight it sleeps out `wait` (or until the
    /// signal): the round's loop asks for exactly the time until its next
    /// retry is due, and must not spin.
    package func collect(wait: Duration, signal: Int32?) throws(CurlError) -> [(
        tag: Int, response: DeliveryResponse
    )] {
        let deadline = MonotonicInstant.now() + wait
        while true {
            _ = try multi.perform()
            let done = multi.finished()
            if !done.isEmpty { return done.compactMap(finish) }
            if running.isEmpty {
                if let signal {
                    var watched = pollfd(fd: signal, events: Int16(POLLIN), revents: 0)
                    let milliseconds = Int32(clamping: max(0, (deadline - MonotonicInstant.now()).milliseconds))
                    _ = Glibc.poll(&watched, 1, milliseconds)
                } else {
                    MonotonicInstant.sleep(until: deadline)
                }
                return []
            }
            let remaining = deadline - MonotonicInstant.now()
            if remaining <= .zero { return [] }
            if try multi.poll(timeout: min(remaining, .seconds(1)), signal: signal) {
                // The answers that came with it, without waiting again.
                _ = try multi.perform()
                return multi.finished().compactMap(finish)
            }
        }
    }

    private func finish(_ done: (easy: UnsafeMutableRawPointer, result: CURLcode)) -> (
        tag: Int, response: DeliveryResponse
    )? {
        guard let transfer = running.removeValue(forKey: done.easy) else { return nil }
        let handle = transfer.handle
        let easy = handle.easy
        multi.remove(easy)
        let status = easy.responseCode()
        var error: CurlError?
        // An answer cut short on purpose still has its status line.
        if done.result != CURLE_OK && !(done.result == CURLE_WRITE_ERROR && transfer.answerTooLong && status > 0) {
            error = CurlError(done.result, detail: handle.errorText)
        }
        // A socket that could not be made for the process's own limits:
        // libcurl 7.88 says only "Couldn't connect" (CURLE_COULDNT_CONNECT,
        // CURLINFO_OS_ERRNO 0), so the socket is made here and its errno kept.
        var ownLimit: Errno?
        if error != nil {
            for code in [transfer.socketErrno, easy.osErrno()] where Errno(code).isOwnLimit {
                ownLimit = Errno(code)
                break
            }
        }
        let response = DeliveryResponse(
            status: error == nil ? status : 0, error: error, retryAfter: easy.header("Retry-After"),
            answer: transfer.answer, duration: MonotonicInstant.now() - transfer.started, ownLimit: ownLimit)
        idle.append(handle)
        return (transfer.tag, response)
    }

    /// CURLOPT_OPENSOCKETFUNCTION of every handle: the socket libcurl
    /// would make itself, and the errno of one that could not be made.
    private static let openSocket: curl_opensocket_callback = { context, _, address in
        guard let address else { return CURL_SOCKET_BAD }
        let made = Glibc.socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
        if made < 0, let context {
            Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().socketErrno = Glibc.errno
        }
        return made
    }

    /// CURLOPT_WRITEFUNCTION of every handle: the answer into its
    /// `Transfer` (CURLOPT_WRITEDATA), up to the capture, and no more than
    /// `answerLimit` read at all.
    private static let write: curl_write_callback = { data, size, count, context in
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
    }
}

/// The state of one transfer in flight; the write callback's context.
private final class Transfer {
    let handle: DeliveryHandle
    let tag: Int
    /// Held until the transfer ends: libcurl copies it each time the
    /// transfer connects, a retry's new connection too.
    let url: CurlURL?
    let headers: CurlHeaderList
    let capture: Int
    let started = MonotonicInstant.now()
    var answer: [UInt8] = []
    var answerBytes = 0
    var answerTooLong = false
    /// The errno of a socket libcurl asked for and did not get; 0 if none.
    var socketErrno: Int32 = 0

    init(handle: DeliveryHandle, tag: Int, url: CurlURL?, headers: CurlHeaderList, capture: Int) {
        self.handle = handle
        self.tag = tag
        self.url = url
        self.headers = headers
        self.capture = capture
    }
}
