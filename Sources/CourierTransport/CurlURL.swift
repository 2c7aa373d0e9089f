import CCurl

/// A URL parsed once by libcurl's own parser (a CURLU handle), for every
/// request to it (CURLOPT_CURLU). Set as a string, a URL is parsed again
/// at each transfer, and the parse and the URL it prints back were about
/// 11 k of the ~80 k instructions libcurl spends on a request.
///
/// The flags are those libcurl parses CURLOPT_URL with (7.88, url.c), so
/// the request is the one the string would have made. libcurl reads the
/// handle, and copies it each time the transfer connects (a retry
/// reconnects): it must live until the transfer ends, and is never
/// changed after it is made.
final class CurlURL {
    let handle: OpaquePointer
    /// What was parsed, as given.
    let text: String

    /// Nil when libcurl cannot parse `text`: the request then sets the
    /// string, and libcurl fails the transfer with its own words, as it
    /// always has.
    init?(_ text: String) {
        guard let handle = courier_url() else { return nil }
        let parsed = courier_url_set(
            handle, CURLUPART_URL, text, UInt32(CURLU_GUESS_SCHEME) | UInt32(CURLU_NON_SUPPORT_SCHEME))
        guard parsed == CURLUE_OK else {
            courier_url_cleanup(handle)
            return nil
        }
        self.handle = handle
        self.text = text
    }

    deinit { courier_url_cleanup(handle) }
}
