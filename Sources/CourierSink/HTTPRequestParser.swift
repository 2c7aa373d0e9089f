/// Reads one request at a time from a connection's bytes, by RFC 9112's
/// rules and strictly: whatever a proxy in front could frame differently
/// (two lengths, a signed one, space before a colon, folded lines, bare CR
/// or LF, a transfer coding) is refused, because request smuggling lives in
/// exactly those disagreements.
struct HTTPRequestParser {
    enum Problem: Error, Equatable {
        case malformed(String)
        case headersTooLarge
        case bodyTooLarge
        case lengthRequired
        case unsupportedEncoding
        case unsupportedVersion

        /// What the error answer says (constant text: no JSON escaping needed).
        var message: String {
            switch self {
            case .malformed(let what): return what
            case .headersTooLarge: return "request head larger than \(HTTPRequestParser.headerLimit) bytes"
            case .bodyTooLarge: return "Content-Length larger than the body limit"
            case .lengthRequired: return "POST and PUT need a Content-Length"
            case .unsupportedEncoding: return "chunked transfer coding is not implemented; send a Content-Length"
            case .unsupportedVersion: return "only HTTP/1.x is spoken here"
            }
        }

        /// The answer before the connection is closed.
        var status: Int {
            switch self {
            case .malformed: return 400
            case .headersTooLarge: return 431
            case .bodyTooLarge: return 413
            case .lengthRequired: return 411
            case .unsupportedEncoding: return 501
            case .unsupportedVersion: return 505
            }
        }
    }

    /// A request's line and header fields, and how long its body is.
    struct Head {
        let method: String
        let target: String
        /// Names lowercased, values without the optional spaces around them.
        let headers: [(name: String, value: String)]
        let contentLength: Int
        /// The bytes up to and including the empty line.
        let size: Int
        let keepAlive: Bool
    }

    static let headerLimit = 64 * 1024

    /// The request at the front of `buffer` and how many bytes it used;
    /// nil when more bytes are needed.
    static func parse(_ buffer: [UInt8], bodyLimit: Int) throws(Problem) -> (HTTPRequest, Int)? {
        guard let head = try parseHead(buffer, bodyLimit: bodyLimit) else { return nil }
        // Compared as what is left, not as a sum: with a large enough body
        // limit, header size + Content-Length would overflow.
        guard buffer.count - head.size >= head.contentLength else { return nil }
        let end = head.size + head.contentLength
        let request = HTTPRequest(
            method: head.method, target: head.target, headers: head.headers, body: Array(buffer[head.size..<end]))
        return (request, end)
    }

    /// The head at the front of `buffer`; nil until its empty line arrives.
    static func parseHead(_ buffer: [UInt8], bodyLimit: Int) throws(Problem) -> Head? {
        guard let end = headEnd(buffer) else {
            if buffer.count > headerLimit { throw .headersTooLarge }
            return nil
        }
        if end > headerLimit { throw .headersTooLarge }
        let lines = split(buffer[0..<end])
        guard let first = lines.first else { throw .malformed("no request line") }
        let (method, target, minor) = try requestLine(first)
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() { headers.append(try field(line)) }
        let contentLength = try length(headers, method: method, minor: minor)
        if contentLength > bodyLimit { throw .bodyTooLarge }
        let connection = headers.filter { $0.name == "connection" }
            .flatMap { $0.value.lowercased().split(separator: ",").map { String($0).trimmingSpaces } }
        let keepAlive = minor == 0 ? connection.contains("keep-alive") : !connection.contains("close")
        return Head(
            method: method, target: target, headers: headers, contentLength: contentLength, size: end + 4,
            keepAlive: keepAlive)
    }

    /// `METHOD SP /target SP HTTP/1.x`, one space each; the minor version.
    private static func requestLine(_ line: ArraySlice<UInt8>) throws(Problem) -> (String, String, Int) {
        let parts = line.split(separator: space, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("bad request line") }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        // Every standard method is upper-case letters; a token with others
        // is nothing this server answers.
        guard !method.isEmpty, method.allSatisfy({ (65...90).contains($0) }) else {
            throw .malformed("bad method")
        }
        // Origin form, printable ASCII: anything else must be percent-encoded.
        guard target.first == UInt8(ascii: "/"), target.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .malformed("bad request target")
        }
        let digits = Array(version.dropFirst(5))
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)), digits[1] == UInt8(ascii: "."),
            isDigit(digits[0]), isDigit(digits[2])
        else { throw .malformed("bad HTTP version") }
        guard digits[0] == UInt8(ascii: "1") else { throw .unsupportedVersion }
        return (String(decoding: method, as: UTF8.self), String(decoding: target, as: UTF8.self), Int(digits[2] - 48))
    }

    /// `name: value`, the name a token right up to the colon.
    private static func field(_ line: ArraySlice<UInt8>) throws(Problem) -> (name: String, value: String) {
        // A line starting with a space or tab continues the one before
        // (obs-fold), which RFC 9112 §5.2 lets a server refuse.
        if line.first == space || line.first == tab { throw .malformed("folded header line") }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon != line.startIndex,
            line[..<colon].allSatisfy(SinkBytes.isToken)
        else { throw .malformed("bad header name") }
        var value = line[(colon + 1)...]
        while let byte = value.first, byte == space || byte == tab { value.removeFirst() }
        while let byte = value.last, byte == space || byte == tab { value.removeLast() }
        // Visible bytes, spaces, tabs and obs-text; no controls: a CR, LF or
        // NUL inside a value is read as a line end by some parsers.
        guard value.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == tab }) else {
            throw .malformed("control character in a header value")
        }
        guard let text = String(validating: value, as: UTF8.self) else {
            throw .malformed("header value is not UTF-8")
        }
        return (String(decoding: line[..<colon], as: UTF8.self).lowercased(), text)
    }

    /// RFC 9112 §6.3: one Content-Length of digits only, no Transfer-Encoding.
    private static func length(_ headers: [(name: String, value: String)], method: String, minor: Int)
        throws(Problem) -> Int
    {
        let lengths = headers.filter { $0.name == "content-length" }.map(\.value)
        let codings = headers.filter { $0.name == "transfer-encoding" }.map(\.value)
        if !codings.isEmpty {
            // With a length too, or in HTTP/1.0, the framing is ambiguous;
            // chunked last is framing this server does not implement; any
            // other last coding leaves the length unknowable (§6.3, 4).
            let last = codings.joined(separator: ",").split(separator: ",").last.map(String.init)
            guard lengths.isEmpty, minor > 0, last?.trimmingSpaces.lowercased() == "chunked" else {
                throw .malformed("Transfer-Encoding with a length, in HTTP/1.0, or not chunked last")
            }
            throw .unsupportedEncoding
        }
        guard let text = lengths.first else {
            if method == "POST" || method == "PUT" { throw .lengthRequired }
            return 0
        }
        // Identical repeats are allowed by RFC 9110 §8.6 but buy nothing.
        guard lengths.count == 1 else { throw .malformed("more than one Content-Length") }
        guard !text.isEmpty, text.utf8.allSatisfy(isDigit) else { throw .malformed("bad Content-Length") }
        // All digits yet past Int: larger than any body limit.
        guard let length = Int(text) else { throw .bodyTooLarge }
        return length
    }

    /// Where the empty line (CR LF CR LF) that ends the head starts.
    static func headEnd(_ buffer: [UInt8], from start: Int = 0) -> Int? {
        guard buffer.count >= 4 else { return nil }
        var index = max(0, start)
        while index + 3 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The head's lines; a CR or LF left inside a line is a bare one.
    private static func split(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            if head[index] == 13, index + 1 < head.endIndex, head[index + 1] == 10 {
                lines.append(head[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(head[start..<head.endIndex])
        return lines
    }

    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    private static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }
}
