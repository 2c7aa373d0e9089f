import CCurl
import CourierConfig

/// One blocking request on its own easy handle: what a catalog sync needs
/// (one page at a time) and an OAuth token request, with the same TLS and
/// redirect rules as delivery.
package struct HTTPFetch {
    let options: CurlOptions
    let headers: [HTTPHeaderField]
    /// OAuth: the `Authorization` of each request, renewed once after a 401.
    let bearer: (any BearerSource)?
    /// The largest answer read; a catalog page is far smaller.
    static let answerLimit = 64 << 20

    package init(options: CurlOptions, headers: [HTTPHeaderField], bearer: (any BearerSource)? = nil) {
        self.options = options
        self.headers = headers
        self.bearer = bearer
    }

    package struct Answer {
        package let status: Int
        package let body: [UInt8]
    }

    package func get(_ url: String) throws(FetchError) -> Answer {
        try authorized(url, body: nil)
    }

    package func post(_ url: String, json body: [UInt8]) throws(FetchError) -> Answer {
        try authorized(url, body: (body, Self.json))
    }

    /// An `application/x-www-form-urlencoded` POST: the OAuth token request.
    package func post(_ url: String, form body: String) throws(CurlError) -> Answer {
        try perform(url, body: (Array(body.utf8), Self.form), extra: [])
    }

    private static let json = HTTPHeaderField(constant: "Content-Type", "application/json")
    private static let form = HTTPHeaderField(constant: "Content-Type", "application/x-www-form-urlencoded")

    /// The request with its bearer token; a 401 gets one more try with a
    /// new token (RFC 6750 §3.1: the token expired or was revoked).
    private func authorized(_ url: String, body: ([UInt8], HTTPHeaderField)?) throws(FetchError) -> Answer {
        guard let bearer else { return try attempt(url, body: body, extra: []) }
        let (field, generation) = try bearer.field()
        var answer = try attempt(url, body: body, extra: [field])
        if answer.status == 401, let renewed = try bearer.renewed(after: generation) {
            answer = try attempt(url, body: body, extra: [renewed])
        }
        // An error answer is only ever shown, kept in a state file or
        // logged: one that echoes the token must not carry it there.
        guard (200...299).contains(answer.status) else {
            return Answer(status: answer.status, body: bearer.redact(answer.body))
        }
        return answer
    }

    private func attempt(_ url: String, body: ([UInt8], HTTPHeaderField)?, extra: [HTTPHeaderField])
        throws(FetchError) -> Answer
    {
        do { return try perform(url, body: body, extra: extra) } catch { throw .curl(error) }
    }

    private final class Sink {
        var bytes: [UInt8] = []
        var tooLong = false
    }

    private func perform(_ url: String, body: ([UInt8], HTTPHeaderField)?, extra: [HTTPHeaderField])
        throws(CurlError) -> Answer
    {
        let easy = try CurlEasy()
        let sink = Sink()
        var fields = headers + extra + [HTTPHeaderField(constant: "Expect", "")]
        if let body { fields.append(body.1) }
        let list = CurlHeaderList(HeaderLines(fields))
        let errors = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errors.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        defer { errors.deallocate() }
        try options.apply(to: easy, errorBuffer: errors)
        try easy.set(CURLOPT_URL, url)
        try easy.set(CURLOPT_ACCEPT_ENCODING, "")
        try easy.set(CURLOPT_HTTPHEADER, list: list.list)
        if let body {
            try easy.setPostBody(body.0)
        }
        try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(sink).toOpaque())
        try easy.set(
            CURLOPT_WRITEFUNCTION,
            writer: { data, size, count, context in
                guard let data, let context else { return 0 }
                let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                let length = size * count
                if sink.bytes.count + length > HTTPFetch.answerLimit {
                    sink.tooLong = true
                    return 0
                }
                data.withMemoryRebound(to: UInt8.self, capacity: length) {
                    sink.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
                }
                return length
            })
        let result = withExtendedLifetime((sink, list)) { courier_easy_perform(easy.handle) }
        guard result == CURLE_OK else {
            if sink.tooLong {
                throw CurlError(result, detail: "the answer is larger than \(HTTPFetch.answerLimit) bytes")
            }
            throw CurlError(result, detail: String(cString: errors))
        }
        return Answer(status: easy.responseCode(), body: sink.bytes)
    }
}

/// Why a fetch got no answer: the transfer failed, or no OAuth token could
/// be had for it.
package enum FetchError: Error, Sendable, CustomStringConvertible {
    case curl(CurlError)
    case token(OAuthError)

    package var description: String {
        switch self {
        case .curl(let error): return error.description
        case .token(let error): return error.description
        }
    }
}

/// Where a fetch's `Authorization: Bearer` comes from (a catalog's OAuth
/// tokens, CourierTokens' `OAuthBearer`): the current token, one new token
/// after a 401, and the tokens sent so far taken out of an answer.
package protocol BearerSource: AnyObject {
    func field() throws(FetchError) -> (HTTPHeaderField, generation: Int)
    /// After a 401 to the token of `generation`: a new token to try once
    /// more with, or nil when one was already tried.
    func renewed(after generation: Int) throws(FetchError) -> HTTPHeaderField?
    func redact(_ body: [UInt8]) -> [UInt8]
}
