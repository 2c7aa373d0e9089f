import Foundation
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// The request parser on 100,000 seeded hostile inputs, like the other
/// parsers in FuzzTests: mutated valid requests, spliced header lines and
/// random bytes. It must never trap; whatever it accepts must be framed the
/// one way RFC 9112 allows, checked here by an independent reading.
@Suite(.tags(.integration)) struct HTTPParserFuzzTests {
    static let bodyLimit = 64

    static let seeds: [[UInt8]] = [
        "POST /records HTTP/1.1\r\nHost: a\r\nIdempotency-Key: k-1\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
        "GET /catalogs/foods/delta?since=0&cursor=2 HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /x HTTP/1.0\r\nContent-Length:0\r\nConnection: keep-alive\r\n\r\n",
        "PUT /y HTTP/1.1\r\nX-Empty:\r\nX-Tab:\t v \t\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r\n",
        "POST /transactions/batch?atomic=true HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\nzz",
    ].map { Array($0.utf8) }

    /// Header lines that framing attacks and sloppy clients send.
    static let lines: [[UInt8]] = [
        "Content-Length: 5\r\n", "Content-Length: +5\r\n", "Content-Length : 5\r\n", "content-length: 0\r\n",
        "Content-Length: 5, 5\r\n", "Content-Length: 99999999999999999999\r\n", "Content-Length: 100\r\n",
        "Transfer-Encoding: chunked\r\n", "Transfer-Encoding: gzip, chunked\r\n", " folded\r\n", "\tfolded\r\n",
        "X: a\rb\r\n", "X: a\nb\r\n", "X\u{0}: a\r\n", ": empty\r\n", "Connection: close\r\n", "Host: a\r\n",
        "X-Obs: \u{e9}\r\n", "\r\n",
    ].map { Array($0.utf8) }

    static let alphabet: [UInt8] =
        Array(" :\t\r\n,+-0123456789/HTTP.aZ".utf8) + [0x00, 0x01, 0x7F, 0x80, 0xC3, 0xA9, 0xFF]

    static func mutate(_ input: [UInt8], _ random: inout FuzzTests.Generator) -> [UInt8] {
        FuzzTests.mutate(input, &random, edits: 3, alphabet: alphabet) { bytes, at, random in
            bytes.insert(contentsOf: random.pick(lines), at: lineStart(in: bytes, near: at))
        }
    }

    /// The start of the line after `index` (a place to splice a header in).
    static func lineStart(in bytes: [UInt8], near index: Int) -> Int {
        var at = index
        while at + 1 < bytes.count, !(bytes[at] == 13 && bytes[at + 1] == 10) { at += 1 }
        return min(bytes.count, at + 2)
    }

    static func input(_ index: Int, _ random: inout FuzzTests.Generator) -> [UInt8] {
        if index < seeds.count { return seeds[index] }
        switch random.below(10) {
        case 0:
            return (0..<random.below(200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        case 1:
            return (0..<random.below(120)).map { _ in random.pick(alphabet) } + Array("\r\n\r\n".utf8)
        default:
            return mutate(random.pick(seeds), &random)
        }
    }

    @Test("the request parser never traps and frames whatever it accepts the one way RFC 9112 allows")
    func requestParser() {
        var random = FuzzTests.Generator(state: 0x4854_5450_0001)
        var counts = (accepted: 0, refused: 0, waiting: 0)
        var problems: [String] = []
        for index in 0..<100_000 {
            let input = Self.input(index, &random)
            do {
                guard let (request, used) = try HTTPRequestParser.parse(input, bodyLimit: Self.bodyLimit) else {
                    counts.waiting += 1
                    if let reason = Self.waitsWrongly(input) { problems.append(reason + ": \(Self.show(input))") }
                    continue
                }
                counts.accepted += 1
                if let reason = Self.framedWrongly(request, used: used, input: input) {
                    problems.append(reason + ": \(Self.show(input))")
                }
            } catch {
                counts.refused += 1
                #expect([400, 411, 413, 431, 501, 505].contains(error.status))
            }
            if problems.count >= 5 { break }
        }
        #expect(problems.isEmpty, "\(problems)")
        // The generator must reach every outcome often, or it tests little.
        #expect(counts.accepted > 5_000 && counts.refused > 10_000 && counts.waiting > 5_000, "\(counts)")
    }

    /// The connection's own reading (head, then a body sized by it, under
    /// the byte budget) must agree with the parser on every input: same
    /// status for a refusal, same body for a request, silence for a request
    /// cut short. Fewer cases: each is a connection.
    @Test("the server answers every fuzzed request as the parser reads it")
    func serverAgreesWithTheParser() throws {
        let server = try HTTPServer(
            limits: HTTPServerLimits(bodyLimit: Self.bodyLimit, headerDeadline: .seconds(2), bodyDeadline: .seconds(2))
        ) { request in
            .respond(HTTPResponse(status: 200, body: Array("\(request.body.count) \(request.target)".utf8)))
        }
        server.start()
        defer { server.stop() }
        var random = FuzzTests.Generator(state: 0x4854_5450_0002)
        var disagreements: [String] = []
        for index in 0..<3_000 where disagreements.count < 5 {
            let input = Self.input(index, &random)
            let expected: String
            switch Result(catching: { () throws(HTTPRequestParser.Problem) in
                try HTTPRequestParser.parse(input, bodyLimit: Self.bodyLimit)
            }) {
            case .success(let parsed?): expected = "HTTP/1.1 200 OK\r\n\(parsed.0.body.count) \(parsed.0.target)"
            case .success(nil): expected = ""
            case .failure(let problem): expected = "HTTP/1.1 \(problem.status) "
            }
            let client = try RawClient(port: server.port)
            client.send(input)
            client.finishSending()
            let (answer, closed) = client.receive(for: .seconds(3))
            let first = answer.components(separatedBy: "HTTP/1.1 ").dropFirst().first.map { "HTTP/1.1 " + $0 } ?? ""
            let agrees =
                expected.isEmpty
                ? answer.isEmpty
                : first.hasPrefix(expected.components(separatedBy: "\r\n")[0])
                    && (!expected.contains("\r\n") || first.hasSuffix(expected.components(separatedBy: "\r\n")[1]))
            if !agrees || !closed {
                disagreements.append("\(Self.show(input)) -> \(answer.prefix(80).debugDescription)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
        #expect(
            HTTPServerLimitTests.eventually(.seconds(2)) { server.bufferedBytes == 0 && server.openConnections == 0 })
    }

    static func show(_ input: [UInt8]) -> String { String(decoding: input.prefix(160), as: UTF8.self).debugDescription }

    /// The head as an independent reader sees it: the bytes before the
    /// first empty line, split at CR LF.
    static func head(_ input: [UInt8]) -> (lines: [[UInt8]], end: Int)? {
        guard
            let end = (0..<max(0, input.count - 3)).first(where: {
                input[$0..<($0 + 4)].elementsEqual([13, 10, 13, 10])
            })
        else { return nil }
        var lines: [[UInt8]] = [[]]
        var at = 0
        while at < end {
            if input[at] == 13 && at + 1 < end && input[at + 1] == 10 {
                lines.append([])
                at += 2
            } else {
                lines[lines.count - 1].append(input[at])
                at += 1
            }
        }
        return (lines, end)
    }

    /// Why waiting for more bytes is wrong here, if it is.
    static func waitsWrongly(_ input: [UInt8]) -> String? {
        guard let (lines, end) = head(input) else {
            return input.count > HTTPRequestParser.headerLimit ? "waits on an oversized head" : nil
        }
        // A complete head: only an incomplete body may still be waited for.
        let lengths = lines.dropFirst().compactMap { line -> Int? in
            guard let colon = line.firstIndex(of: 58),
                String(decoding: line[..<colon], as: UTF8.self).lowercased() == "content-length"
            else { return nil }
            return Int(String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces))
        }
        guard lengths.count == 1, let length = lengths.first else { return "waits without one Content-Length" }
        return input.count - (end + 4) < length ? nil : "waits though the body is complete"
    }

    /// Why an accepted request is framed wrongly, if it is.
    static func framedWrongly(_ request: HTTPRequest, used: Int, input: [UInt8]) -> String? {
        guard let (lines, end) = head(input) else { return "accepted without an empty line" }
        let bodyStart = end + 4
        guard used <= input.count, used == bodyStart + request.body.count,
            request.body.elementsEqual(input[bodyStart..<used])
        else { return "the body is not the bytes after the head" }
        guard request.headers.count == lines.count - 1 else { return "header lines were merged or dropped" }
        let lengthLines = lines.dropFirst().filter {
            String(decoding: $0.prefix(15), as: UTF8.self).lowercased() == "content-length:"
        }
        if let line = lengthLines.first {
            let value = String(decoding: line.dropFirst(15), as: UTF8.self).trimmingCharacters(
                in: .init(charactersIn: " \t"))
            guard lengthLines.count == 1, !value.isEmpty, value.utf8.allSatisfy({ (48...57).contains($0) }),
                Int(value) == request.body.count
            else { return "the body length is not the one Content-Length of digits" }
        } else if !request.body.isEmpty || ["POST", "PUT"].contains(request.method) {
            return "a body, or a POST, without a Content-Length"
        }
        guard request.header("transfer-encoding") == nil else { return "accepted a Transfer-Encoding" }
        guard !request.method.isEmpty, request.method.utf8.allSatisfy({ (65...90).contains($0) }),
            request.target.hasPrefix("/"), request.target.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { return "a bad request line" }
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(NameBytes.isToken), name == name.lowercased()
            else { return "header name \(name.debugDescription) is not a lower-case token" }
            guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 9 }),
                value.utf8.first.map({ $0 != 32 && $0 != 9 }) ?? true,
                value.utf8.last.map({ $0 != 32 && $0 != 9 }) ?? true
            else { return "header value \(value.debugDescription) has controls or untrimmed spaces" }
        }
        // Written out again, it parses to the same request.
        let again =
            Array("\(request.method) \(request.target) HTTP/1.1\r\n".utf8)
            + request.headers.flatMap { Array("\($0.name): \($0.value)\r\n".utf8) } + [13, 10] + request.body
        guard let (twin, twinUsed) = try? HTTPRequestParser.parse(again, bodyLimit: bodyLimit), twinUsed == again.count,
            twin.method == request.method, twin.target == request.target, twin.body == request.body,
            twin.headers.elementsEqual(request.headers, by: { $0 == $1 })
        else { return "does not parse the same when written out again" }
        return nil
    }
}
