import CCurl

/// An easy handle of `HTTPClient`'s, set up once when it is made: the rules
/// of `CurlOptions`, the write callback and the error buffer. libcurl keeps
/// every option on a handle from one transfer to the next until it is set
/// again or the handle is reset (curl_easy_setopt(3)), so a request sets
/// only what is its own: URL, body, header list and its `Transfer`. A
/// `curl_easy_reset` and the whole set-up again per request cost more than
/// the rest of starting it.
final class DeliveryHandle {
    let easy: CurlEasy
    /// The CA file the handle verifies with; a request for a subscriber
    /// with another one sets the handle up anew (`use(_:)`).
    private(set) var options: CurlOptions
    /// CURLOPT_ERRORBUFFER: curl's detailed words for a failure. curl
    /// empties it when a transfer starts (since 7.60), and it is read
    /// before the handle's next transfer is started.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let writer: curl_write_callback
    private let opener: curl_opensocket_callback

    init(_ options: CurlOptions, writer: curl_write_callback, opener: curl_opensocket_callback) throws(CurlError) {
        easy = try CurlEasy()
        self.options = options
        self.writer = writer
        self.opener = opener
        errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        try setUp()
    }

    deinit { errorBuffer.deallocate() }

    /// Makes the handle follow `options`: nothing to do when they are the
    /// ones it was set up with. Otherwise it is reset and set up again; if
    /// that fails the handle is half set up and must not be used again.
    func use(_ options: CurlOptions) throws(CurlError) {
        guard options != self.options else { return }
        easy.reset()
        self.options = options
        try setUp()
    }

    private func setUp() throws(CurlError) {
        try options.apply(to: easy, errorBuffer: errorBuffer)
        try easy.set(CURLOPT_WRITEFUNCTION, writer: writer)
        try easy.set(CURLOPT_OPENSOCKETFUNCTION, opener: opener)
    }

    var errorText: String { String(cString: errorBuffer) }
}
