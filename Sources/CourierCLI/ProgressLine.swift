import CourierRound
import CourierSupport
import Foundation
import Glibc

/// A foreground round's progress on one line of a terminal's standard
/// error, redrawn in place (`\r`), with log lines printed above it. Only
/// on a terminal: in a pipe, and in the journal, there is no line to draw
/// over, so nothing is drawn.
final class ProgressLine: Sendable {
    /// Lines stay within a terminal of 80 columns: a longer one would wrap,
    /// and `\r` would redraw only its last part.
    static let width = 79

    private let shown = Locked(0)

    /// Standard error is a terminal, and neither the journal nor --quiet
    /// asks for silence.
    static func wanted(journal: Bool, quiet: Bool) -> Bool {
        !journal && !quiet && isatty(STDERR_FILENO) == 1
    }

    func draw(_ progress: RoundProgress) { draw(Self.text(progress)) }

    func draw(_ text: String) {
        let line = String(text.prefix(Self.width))
        shown.withLock { width in
            let padding = String(repeating: " ", count: max(0, width - line.count))
            Self.write("\r" + line + padding)
            width = line.count
        }
    }

    /// A whole line (a log line) above the progress line, which is drawn
    /// again after it at the next `draw`.
    func print(_ text: String) {
        shown.withLock { width in
            Self.write("\r" + String(repeating: " ", count: width) + "\r" + text)
            width = 0
        }
    }

    /// Leaves the terminal as if nothing had been drawn.
    func clear() { print("") }

    private static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    static func text(_ progress: RoundProgress) -> String { "courier: " + parts(progress).joined(separator: ", ") }

    /// `120 sent, 3 need attention, ~865 left, 8 in flight, next retry of
    /// 12 in 8 s`: the same words in `status`.
    static func parts(_ progress: RoundProgress) -> [String] {
        var parts = ["\(progress.sent) sent", "\(progress.needsAttention) need attention"]
        if progress.deferred > 0 { parts.append("\(progress.deferred) deferred") }
        if let left = progress.left { parts.append("~\(left) left") }
        if progress.inFlight > 0 { parts.append("\(progress.inFlight) in flight") }
        if progress.retrying > 0 {
            parts.append(
                "next retry of \(progress.retrying)" + (progress.nextRetrySeconds.map { " in \($0) s" } ?? ""))
        }
        return parts
    }
}
