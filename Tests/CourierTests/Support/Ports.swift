import Foundation
import Glibc

@testable import CourierPosix

/// A loopback port that refuses connections, for as long as this value
/// lives: bound, never listening. A port that was bound and closed again
/// would do the same only until another process took it; this one stays
/// ours, so a connection to it is refused every time.
final class RefusingPort {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw TestFailure("bind or getsockname: \(errno)")
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }

    var address: String { "127.0.0.1:\(port)" }
}

/// A loopback port that takes connections and never answers: it listens
/// but never accepts, so the kernel completes each handshake and keeps
/// what the client sends, and the client waits until its own timeout. A
/// subscriber that hangs, as seen from courier.
final class SilentPort {
    private let bound: RefusingPort

    init() throws {
        bound = try RefusingPort()
        // A backlog far above what one round keeps in flight.
        guard listen(bound.fd, 512) == 0 else { throw TestFailure("listen: \(errno)") }
    }

    var address: String { bound.address }
}

/// Waits for a line containing `marker` in a file a child process writes
/// (its standard error, say), and returns that line.
func awaitLine(containing marker: String, in path: String, within timeout: Duration = .seconds(30)) throws -> String {
    let deadline = MonotonicInstant.now() + timeout
    while MonotonicInstant.now() < deadline {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        if let line = text.split(separator: "\n").first(where: { $0.contains(marker) }) { return String(line) }
        usleep(10_000)
    }
    throw TestFailure("no line with “\(marker)” in \(path) within \(timeout)")
}
