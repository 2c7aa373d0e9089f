/// A parsed HTTP/1.1 request, as the sink and the tests' server see it.
public struct HTTPRequest: Sendable {
    public let method: String
    public let target: String
    /// Names lowercased, in the order received.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.target = target
        self.headers = headers.map { ($0.name.lowercased(), $0.value) }
        self.body = body
    }

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last { $0.name == lower }?.value
    }

    /// Every value of a header, in the order received.
    public func values(of name: String) -> [String] {
        let lower = name.lowercased()
        return headers.filter { $0.name == lower }.map(\.value)
    }

    public var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array((text + "\n").utf8))
    }

    func serialized(keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n"
        if !keepAlive { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}

/// What the server does with a request: answer it, or misbehave on purpose
/// (the tests' faults).
public enum HTTPServerAction: Sendable {
    case respond(HTTPResponse)
    /// Say nothing for this long, then hang up.
    case stall(Duration)
    /// Hang up with a TCP reset, without an answer.
    case reset
    /// Send these bytes as the answer, then hang up.
    case raw([UInt8])
    /// Send these bytes one at a time, this far apart (a slow-drip answer).
    case drip([UInt8], every: Duration)
    /// Send these bytes, then hang up with a reset (an answer cut off).
    case partialThenReset([UInt8])
}

/// Reads one request at a time from a connection's bytes.
struct HTTPRequestParser {
    enum Problem: Error, Equatable {
        case malformed(String)
        case headersTooLarge
        case bodyTooLarge
        case lengthRequired
        case unsupportedEncoding
    }

    static let headerLimit = 64 * 1024

    /// The request at the front of `buffer` and how many bytes it used;
    /// nil when more bytes are needed.
    static func parse(_ buffer: [UInt8], bodyLimit: Int) throws(Problem) -> (HTTPRequest, Int)? {
        guard let headerEnd = find([13, 10, 13, 10], in: buffer) else {
            if buffer.count > headerLimit { throw .headersTooLarge }
            return nil
        }
        if headerEnd > headerLimit { throw .headersTooLarge }
        guard let head = String(validating: buffer[0..<headerEnd], as: UTF8.self) else {
            throw .malformed("request head is not UTF-8")
        }
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1."), !requestLine[0].isEmpty,
            requestLine[0].allSatisfy({ $0.isUppercase }), requestLine[1].hasPrefix("/")
        else { throw .malformed("bad request line") }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw .malformed("bad header line")
            }
            headers.append(
                (String(line[..<colon]).lowercased(), String(line[line.index(after: colon)...]).trimmingSpaces))
        }
        if headers.contains(where: { $0.name == "transfer-encoding" }) { throw .unsupportedEncoding }
        var length = 0
        if let value = headers.last(where: { $0.name == "content-length" })?.value {
            guard let parsed = Int(value), parsed >= 0 else { throw .malformed("bad Content-Length") }
            length = parsed
        } else if requestLine[0] == "POST" || requestLine[0] == "PUT" {
            throw .lengthRequired
        }
        if length > bodyLimit { throw .bodyTooLarge }
        let bodyStart = headerEnd + 4
        // Compared as what is left, not as a sum: with a large enough
        // body limit, header size + Content-Length would overflow.
        guard buffer.count - bodyStart >= length else { return nil }
        let request = HTTPRequest(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers,
            body: Array(buffer[bodyStart..<(bodyStart + length)]))
        return (request, bodyStart + length)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
