import CourierPosix
import Glibc

/// Reads and writes on an accepted socket against absolute deadlines:
/// poll(2) waits for at most the time left, so a peer that trickles bytes
/// gains nothing by it. The server owns the descriptor and closes it.
struct ConnectionSocket {
    let fd: Int32

    /// How much one receive takes at most.
    static let chunkSize = 16 * 1024

    enum Received { case received, closed, timedOut }

    /// Appends at most `count` bytes (one recv) to `buffer`.
    func receive(into buffer: inout [UInt8], upTo count: Int, until deadline: MonotonicInstant) -> Received {
        while true {
            guard let wait = Self.milliseconds(until: deadline) else { return .timedOut }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, wait)
            if polled < 0 && errno != EINTR { return .closed }
            if polled <= 0 { continue }
            let (got, failure) = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { scratch in
                let got = recv(fd, scratch.baseAddress, count, Int32(MSG_DONTWAIT))
                let failure = errno
                if got > 0 { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<got])) }
                return (got, failure)
            }
            if got > 0 { return .received }
            if got < 0 && (failure == EAGAIN || failure == EINTR) { continue }
            return .closed
        }
    }

    /// Sends all of `bytes` within `limit`; false when the peer is gone or
    /// does not read in time.
    func send(_ bytes: [UInt8], within limit: Duration) -> Bool {
        let deadline = MonotonicInstant.now() + limit
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { all -> Int in
                guard let base = all.baseAddress else { return -1 }
                return Glibc.send(fd, base + offset, all.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent > 0 {
                offset += sent
                continue
            }
            guard sent < 0, errno == EAGAIN || errno == EINTR, let wait = Self.milliseconds(until: deadline) else {
                return false
            }
            var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&ready, 1, wait)
        }
        return true
    }

    /// Closing will send a TCP reset instead of a FIN.
    func resetOnClose() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    /// The time left, rounded up to whole milliseconds for poll(2); nil
    /// once the deadline has passed.
    static func milliseconds(until deadline: MonotonicInstant) -> Int32? {
        let left = deadline - MonotonicInstant.now()
        guard left > .zero else { return nil }
        return Int32(clamping: (left.nanoseconds + 999_999) / 1_000_000)
    }
}
