import CourierPosix
import CourierSupport
import Foundation
import Glibc

package struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    package let what: String
    package let error: Errno
    package var description: String { "unable to \(what): \(error)" }
}

/// A small threaded HTTP/1.1 server (keep-alive, Content-Length bodies)
/// for loopback use: the reference sink and the tests' fault server.
/// One thread accepts; each connection gets its own thread.
package final class HTTPServer: Sendable {
    package let port: UInt16
    package let host: String
    private let listener: Int32
    package let limits: HTTPServerLimits
    private let handler: @Sendable (HTTPRequest) -> HTTPServerAction
    private let state = Locked(State())
    private let budget: ByteBudget

    private struct State {
        var stopped = false
        var connections: Set<Int32> = []
    }

    /// With the default limits but for the body's.
    package convenience init(
        host: String = "127.0.0.1", port: UInt16 = 0, bodyLimit: Int = 8 << 20,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPServerAction
    ) throws(HTTPServerError) {
        try self.init(host: host, port: port, limits: HTTPServerLimits(bodyLimit: bodyLimit), handler: handler)
    }

    /// Binds at once (port 0: an ephemeral port, read back from `port`).
    package init(
        host: String = "127.0.0.1", port: UInt16 = 0, limits: HTTPServerLimits,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPServerAction
    ) throws(HTTPServerError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError(what: "create a socket", error: .current) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw HTTPServerError(
                what: "use address \(host) (give an IPv4 address such as 127.0.0.1)", error: Errno(EINVAL))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let error = Errno.current
            close(fd)
            throw HTTPServerError(what: "listen on \(host):\(port)", error: error)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.listener = fd
        self.port = UInt16(bigEndian: actual.sin_port)
        self.host = host
        self.limits = limits
        self.budget = ByteBudget(limit: limits.bufferedBytesLimit)
        self.handler = handler
    }

    deinit { stop() }

    package var address: String { "\(host):\(port)" }

    /// Connections being served now (refused ones never count).
    package var openConnections: Int { state.withLock { $0.connections.count } }

    /// Request bytes all connections hold now (reserved before reading).
    package var bufferedBytes: Int { budget.held }

    /// The most `bufferedBytes` has ever been.
    package var peakBufferedBytes: Int { budget.peak }

    /// Starts accepting on a thread of its own and returns at once.
    package func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops accepting and hangs up every connection. Safe to repeat.
    package func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            for fd in state.connections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if state.withLock({ $0.stopped }) {
                    close(listener)
                    return
                }
                // Out of descriptors: back off rather than spin.
                usleep(10_000)
                continue
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let admission = state.withLock { state -> Admission in
                guard !state.stopped else { return .stopped }
                guard state.connections.count < limits.maxConnections else { return .full }
                state.connections.insert(fd)
                return .serve
            }
            switch admission {
            case .serve: break
            case .full:
                refuse(fd)
                continue
            case .stopped:
                close(fd)
                continue
            }
            let thread = Thread { [self] in
                var connection = HTTPConnection(
                    socket: ConnectionSocket(fd: fd), limits: limits, budget: budget, handler: handler,
                    isStopped: { [self] in state.withLock { $0.stopped } })
                connection.serve()
                // Closed under the lock that stop() shuts connections down
                // under: once the number is free, another socket of this
                // process may get it, and stop() must not hang that one up.
                state.withLock { state in
                    state.connections.remove(fd)
                    close(fd)
                }
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }

    private enum Admission { case serve, full, stopped }

    /// Past the connection limit a client is told at once, 503 with
    /// Retry-After, rather than left waiting in the listen queue without a
    /// word: a webhook sender retries a 503 later, and courier classifies it
    /// so. It is done here, on the accepting thread, without waiting for the
    /// request and without a thread of its own. What the client already
    /// sent is read first, so that closing with unread bytes does not turn
    /// the answer into a reset; bytes still on their way may, and a reset is
    /// retried later all the same.
    private func refuse(_ fd: Int32) {
        let answer = HTTPResponse(
            status: 503, headers: [("Retry-After", "1"), ("Content-Type", "application/json")],
            body: Array(#"{"error":"too many connections (\#(limits.maxConnections)); retry later"}"#.utf8 + [10]))
        let bytes = answer.serialized(keepAlive: false)
        Self.drain(fd)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        shutdown(fd, Int32(SHUT_WR))
        Self.drain(fd)
        close(fd)
    }

    /// Reads whatever has arrived, without waiting (a bounded amount).
    private static func drain(_ fd: Int32) {
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<16 {
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count <= 0 { return }
        }
    }
}
