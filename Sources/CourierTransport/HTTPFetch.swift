import CCurl
import CourierConfig

/// One blocking request on its own easy handle: what a catalog sync needs
/// (one page at a time), with the same TLS and redirect rules as delivery.
package struct HTTPFetch {
    let options: CurlOptions
    let headers: [HTTPHeaderField]
    /// The largest answer read; a catalog page is far smaller.
    static let answerLimit = 64 << 20

    package init(options: CurlOptions, headers: [HTTPHeaderField]) {
        self.options = options
        self.headers = headers
    }

    package struct Answer {
        package let status: Int
        package let body: [UInt8]
    }

    package func get(_ url: String) throws(CurlError) -> Answer {
        try perform(url, body: nil)
    }

    package func post(_ url: String, json body: [UInt8]) throws(CurlError) -> Answer {
        try perform(url, body: body)
    }

    private final class Sink {
        var bytes: [UInt8] = []
        var tooLong = false
    }

    private func perform(_ url: String, body: [UInt8]?) throws(CurlError) -> Answer {
        let easy = try CurlEasy()
        let sink = Sink()
        var fields = headers + [HTTPHeaderField(constant: "Expect", "")]
        if body != nil { fields.append(HTTPHeaderField(constant: "Content-Type", "application/json")) }
        let list = try CurlHeaderList(fields)
        let errors = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errors.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        defer { errors.deallocate() }
        try options.apply(to: easy, errorBuffer: errors)
        try easy.set(CURLOPT_URL, url)
        try easy.set(CURLOPT_ACCEPT_ENCODING, "")
        try easy.set(CURLOPT_HTTPHEADER, list: list.list)
        if let body {
            try easy.setPostBody(body)
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
        let result = withExtendedLifetime((sink, list)) { curl_easy_perform(easy.handle) }
        guard result == CURLE_OK else {
            if sink.tooLong {
                throw CurlError(result, detail: "the answer is larger than \(HTTPFetch.answerLimit) bytes")
            }
            throw CurlError(result, detail: String(cString: errors))
        }
        return Answer(status: easy.responseCode(), body: sink.bytes)
    }
}
