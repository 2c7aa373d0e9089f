import CCurl

/// The rules every request courier makes follows, set in this one place
/// for subscribers (`HTTPClient`) and catalogs (`HTTPFetch`), docs/design.md §3: only
/// `http` and `https`, no signals, redirects never followed, TLS peer and
/// host always verified (`ca-file` sets the CA file), HTTP/2 when a TLS
/// server offers it, the whole request and the connect limited, and curl's
/// detailed words for a failure in `errorBuffer`.
package struct CurlOptions: Sendable, Equatable {
    /// The whole request, connecting included.
    package var timeout: Duration
    /// `ca-file`: libcurl's CA file; nil keeps the system's.
    package var caFile: String?
    /// `.environment` leaves libcurl to read the proxy variables at each
    /// transfer; `.none` connects directly without reading them.
    package var proxy: ProxyLookup

    /// Connecting gets at most this long, so a host that never answers
    /// fails fast even under a long request timeout.
    package static let connectLimit: Duration = .seconds(10)

    package init(timeout: Duration, caFile: String? = nil, proxy: ProxyLookup = .environment) {
        self.timeout = timeout
        self.caFile = caFile
        self.proxy = proxy
    }

    /// The smaller of the request timeout and `connectLimit`.
    package var connectTimeout: Duration { min(timeout, Self.connectLimit) }

    /// Sets the options on a handle (a fresh one, or one after
    /// `curl_easy_reset`). `errorBuffer` must hold `CURL_ERROR_SIZE` bytes
    /// and outlive the transfer.
    func apply(to easy: CurlEasy, errorBuffer: UnsafeMutablePointer<CChar>) throws(CurlError) {
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_NOSIGNAL, 1)
        try easy.set(CURLOPT_FOLLOWLOCATION, 0)
        try easy.set(CURLOPT_SSL_VERIFYPEER, 1)
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile { try easy.set(CURLOPT_CAINFO, caFile) }
        if proxy == .none {
            // Both set, or libcurl still reads no_proxy and NO_PROXY; an
            // empty proxy means none, an empty list excludes no host.
            try easy.set(CURLOPT_PROXY, "")
            try easy.set(CURLOPT_NOPROXY, "")
        }
        try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        try easy.set(CURLOPT_TIMEOUT_MS, Int(timeout.milliseconds))
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(connectTimeout.milliseconds))
        try easy.set(CURLOPT_ERRORBUFFER, pointer: errorBuffer)
    }
}
