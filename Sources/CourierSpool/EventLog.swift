/// syslog priorities, as journald reads them from a `<N>` prefix.
package enum LogLevel: Int, Sendable, Comparable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// How loud a ledger event is: what needs a person is a warning, what
    /// is routine is info.
    package init(for event: LedgerEvent) {
        switch event {
        case .needsAttention, .invalid, .routeTimeout, .catalogFailed: self = .warning
        case .retry, .deferred, .duplicate, .recovered, .acknowledged, .resent, .copied, .backfilled, .deleted, .held,
            .released:
            self = .notice
        case .sent, .accepted, .awaitingRoute, .routeAttached, .catalogSynced, .catalogDeleted: self = .info
        }
    }
}

/// Where a round tells what it does, one line per event; the command line
/// points it at standard error. The core never prints by itself.
package struct EventLog: Sendable {
    package let threshold: LogLevel
    private let write: @Sendable (LogLevel, String) -> Void

    package init(threshold: LogLevel, write: @escaping @Sendable (LogLevel, String) -> Void) {
        self.threshold = threshold
        self.write = write
    }

    package static let silent = EventLog(threshold: .error) { _, _ in }

    package func callAsFunction(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level <= threshold else { return }
        write(level, message())
    }

    /// A ledger line as one log line.
    package func record(_ line: LedgerLine) {
        self(LogLevel(for: line.event), Self.describe(line))
    }

    static func describe(_ line: LedgerLine) -> String {
        let who = line.subscriber == "-" ? line.key : "\(line.key)@\(line.subscriber)"
        var text = "\(line.event.rawValue) \(who)"
        if let status = line.answer.status { text += " status=\(status)" }
        if line.attempt > 0 { text += " attempt=\(line.attempt) \(line.durationMilliseconds)ms" }
        if !line.detail.isEmpty { text += ": " + LedgerLine.escape(String(line.detail.prefix(200))) }
        return text
    }
}
