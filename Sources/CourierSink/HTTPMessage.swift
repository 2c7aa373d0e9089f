/// A parsed HTTP/1.1 request, as the sink and the tests' server see it.
package struct HTTPRequest: Sendable {
    package let method: String
    package let target: String
    /// Names lowercased, in the order received.
    package let headers: [(name: String, value: String)]
    package let body: [UInt8]

    package init(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.target = target
        self.headers = headers.map { ($0.name.lowercased(), $0.value) }
        self.body = body
    }

    package func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last { $0.name == lower }?.value
    }

    /// Every value of a header, in the order received.
    package func values(of name: String) -> [String] {
        let lower = name.lowercased()
        return headers.filter { $0.name == lower }.map(\.value)
    }

    package var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }
}

package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    package static func json(_ status: Int, _ text: String) -> HTTPResponse {
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

    /// RFC 9110 §15's phrases, for every status the sink and the tests'
    /// servers send.
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
        case 409: return "Conflict"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        // RFC 9112 §4 allows an empty reason; the tests' fault server
        // sends statuses no table needs to know.
        default: return ""
        }
    }
}

/// What the server does with a request: answer it, or misbehave on purpose
/// (the tests' faults).
package enum HTTPServerAction: Sendable {
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
