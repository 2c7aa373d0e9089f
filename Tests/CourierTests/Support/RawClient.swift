import Foundation
import Glibc

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// A TCP client on 127.0.0.1 that sends bytes as slowly as a test likes and
/// tells what came back, and when the server hung up.
final class RawClient {
    let fd: Int32

    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("connect: \(errno)")
        }
    }

    deinit { close(fd) }

    /// Says the request is all there is (half-close): a server waiting for
    /// more sees the end at once.
    func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    /// Hangs up (the descriptor itself is closed once, by deinit).
    func hangUp() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// False once the server has hung up (or reset).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// What arrives within `timeout`, and whether the server closed the
    /// connection (end of file or reset) within it.
    func receive(for timeout: Duration) -> (text: String, closed: Bool) {
        let deadline = MonotonicInstant.now() + timeout
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            // Always looks once, even when the time is up.
            let left = max(0, (deadline - MonotonicInstant.now()).milliseconds)
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(clamping: left)) > 0 else {
                if left == 0 { return (String(decoding: answer, as: UTF8.self), false) }
                continue
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (String(decoding: answer, as: UTF8.self), true) }
            answer += chunk[0..<count]
        }
    }

    /// Reads until one whole answer with a Content-Length body is in.
    func answer(within timeout: Duration) -> String {
        let deadline = MonotonicInstant.now() + timeout
        var text = ""
        while MonotonicInstant.now() < deadline {
            let (more, closed) = receive(for: .milliseconds(20))
            text += more
            if closed || Self.isComplete(text) { break }
        }
        return text
    }

    private static func isComplete(_ text: String) -> Bool {
        guard let end = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<end.lowerBound].lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return true }
        return text[end.upperBound...].utf8.count >= length
    }
}
