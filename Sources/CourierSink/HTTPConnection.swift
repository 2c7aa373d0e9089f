import CourierPosix
import Glibc

/// One accepted connection, on a thread of its own: reads a request under
/// the server's deadlines, hands it to the handler, answers (or misbehaves,
/// for the tests' faults), and again while the client keeps it alive.
struct HTTPConnection {
    let socket: ConnectionSocket
    let limits: HTTPServerLimits
    let budget: ByteBudget
    let handler: @Sendable (HTTPRequest) -> HTTPServerAction
    let isStopped: () -> Bool
    /// Bytes received and not yet handed on as a request.
    private var buffer: [UInt8] = []
    /// Bytes reserved from the budget: never less than the buffer, nor,
    /// while a request is read or handled, than that request.
    private var held = 0

    init(
        socket: ConnectionSocket, limits: HTTPServerLimits, budget: ByteBudget,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPServerAction, isStopped: @escaping () -> Bool
    ) {
        self.socket = socket
        self.limits = limits
        self.budget = budget
        self.handler = handler
        self.isStopped = isStopped
    }

    private enum Reading {
        case request(HTTPRequest, keepAlive: Bool)
        case refuse(status: Int, message: String)
        case hangUp
    }

    mutating func serve() {
        defer { budget.release(held) }
        while true {
            switch readRequest() {
            case .request(let request, let keepAlive):
                let again = act(on: handler(request), keepAlive: keepAlive)
                // The request is done with: keep only what the buffer holds.
                budget.release(held - buffer.count)
                held = buffer.count
                guard again else { return }
            case .refuse(let status, let message):
                var answer = HTTPResponse.json(status, #"{"error":"\#(message)"}"#)
                if status == 503 { answer.headers.append(("Retry-After", "1")) }
                _ = socket.send(answer.serialized(keepAlive: false), within: limits.sendDeadline)
                return
            case .hangUp:
                return
            }
        }
    }

    /// The next request. Both deadlines count from now, the moment the
    /// server starts waiting: a byte received never buys more time, so a
    /// client can hold the connection for the body deadline at most.
    private mutating func readRequest() -> Reading {
        let start = MonotonicInstant.now()
        let headerDeadline = start + limits.headerDeadline
        var scanned = 0
        while HTTPRequestParser.headEnd(buffer, from: scanned) == nil {
            if buffer.count > HTTPRequestParser.headerLimit {
                return .refuse(status: 431, message: HTTPRequestParser.Problem.headersTooLarge.message)
            }
            // Only the new bytes are searched: a head dripped a byte at a
            // time must not cost a scan of the whole head per byte.
            scanned = max(0, buffer.count - 3)
            guard hold(buffer.count + ConnectionSocket.chunkSize) else { return Self.overBudget(budget) }
            switch socket.receive(into: &buffer, upTo: ConnectionSocket.chunkSize, until: headerDeadline) {
            case .received: continue
            case .closed: return .hangUp
            case .timedOut:
                // An idle kept-alive connection just ends; a begun request
                // is told why.
                return buffer.isEmpty ? .hangUp : .refuse(status: 408, message: "the request head came too slowly")
            }
        }
        let head: HTTPRequestParser.Head
        do {
            guard let parsed = try HTTPRequestParser.parseHead(buffer, bodyLimit: limits.bodyLimit) else {
                return .hangUp
            }
            head = parsed
        } catch {
            return .refuse(status: error.status, message: error.message)
        }
        // Both parts are bounded (64 KiB, the body limit), but the body
        // limit is the caller's: do not let the sum trap.
        let (total, overflow) = head.size.addingReportingOverflow(head.contentLength)
        if overflow { return .refuse(status: 413, message: HTTPRequestParser.Problem.bodyTooLarge.message) }
        guard hold(total) else { return Self.overBudget(budget) }
        buffer.reserveCapacity(total)
        while buffer.count < total {
            let wanted = min(ConnectionSocket.chunkSize, total - buffer.count)
            switch socket.receive(into: &buffer, upTo: wanted, until: start + limits.bodyDeadline) {
            case .received: continue
            case .closed: return .hangUp
            case .timedOut: return .refuse(status: 408, message: "the request body came too slowly")
            }
        }
        let body: [UInt8]
        if buffer.count == total {
            // The common case: hand the buffer itself on as the body, no copy.
            buffer.removeFirst(head.size)
            body = buffer
            buffer = []
        } else {
            // A pipelined request follows; keep only its bytes.
            body = Array(buffer[head.size..<total])
            buffer = Array(buffer[total...])
        }
        let request = HTTPRequest(method: head.method, target: head.target, headers: head.headers, body: body)
        return .request(request, keepAlive: head.keepAlive)
    }

    /// Reserves up to `count` bytes in all; false when the budget says no.
    private mutating func hold(_ count: Int) -> Bool {
        guard count > held else { return true }
        guard budget.reserve(count - held) else { return false }
        held = count
        return true
    }

    /// 503, as for too many connections: the sink is busy, not the request
    /// wrong (it may fit once other uploads are done).
    private static func overBudget(_ budget: ByteBudget) -> Reading {
        .refuse(status: 503, message: "the server holds as many request bytes as it may (\(budget.limit)); retry later")
    }

    /// Does what the handler said; true to read the next request.
    private func act(on action: HTTPServerAction, keepAlive: Bool) -> Bool {
        switch action {
        case .respond(let response):
            return socket.send(response.serialized(keepAlive: keepAlive), within: limits.sendDeadline) && keepAlive
        case .stall(let duration):
            let deadline = MonotonicInstant.now() + duration
            while MonotonicInstant.now() < deadline, !isStopped() { usleep(20_000) }
        case .reset:
            socket.resetOnClose()
        case .raw(let bytes):
            _ = socket.send(bytes, within: limits.sendDeadline)
        case .drip(let bytes, let interval):
            for byte in bytes {
                guard !isStopped(), socket.send([byte], within: limits.sendDeadline) else { break }
                usleep(UInt32(clamping: interval.nanoseconds / 1000))
            }
        case .partialThenReset(let bytes):
            _ = socket.send(bytes, within: limits.sendDeadline)
            socket.resetOnClose()
        }
        return false
    }
}
