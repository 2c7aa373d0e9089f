import CourierConfig
import CourierPosix
import CourierSpool
import CourierSupport
import Foundation
import Glibc

/// What the last attempt to notify came to, kept in `.courier/notifier.json`
/// so that `status` can say it as it is.
package struct NotifierHealth: Codable, Sendable, Equatable {
    package var working: Bool
    package var detail: String
    package var time: String
    package var round: String

    package static let file = "notifier.json"
}

/// Runs `notify-command` after a background round, with the round's
/// summary as JSON on its standard input (docs/design.md §7).
package struct Notifier {
    let settings: NotifierSettings
    let session: SpoolSession

    package init(_ settings: NotifierSettings, session: SpoolSession) {
        self.settings = settings
        self.session = session
    }

    private var spool: Spool { session.spool }

    /// Whether this summary calls for a notification under the configured mode.
    package func wants(_ summary: RoundSummary) -> Bool {
        guard summary.mode == .background, settings.command != nil else { return false }
        switch settings.notify {
        case .off: return false
        case .always: return summary.movedAnything || summary.tokenErrors != nil
        case .failures: return summary.needsAttention + summary.invalid > 0 || summary.tokenErrors != nil
        }
    }

    /// Notifies if the mode asks for it and records the notifier's health.
    /// Returns the health when it ran.
    @discardableResult
    package func notifyIfWanted(_ summary: RoundSummary) -> NotifierHealth? {
        guard wants(summary), let command = settings.command else { return nil }
        var health = NotifierHealth(
            working: true, detail: "ran \(command)", time: Timestamp.now().rfc3339, round: summary.round.value)
        if let problem = run(command, summary: summary) {
            health.working = false
            // The notifier's own words may carry a secret, as a server's may.
            health.detail = session.redact(problem)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let data = try? encoder.encode(health) {
            // Losing the health note must not fail the round that delivered.
            _ = try? session.commit(
                Transition(newFiles: [
                    .init(Array(data) + [0x0A], as: FileName(NotifierHealth.file), in: .control, replacing: true)
                ]))
        }
        return health
    }

    package static func health(in spool: Spool) -> NotifierHealth? {
        guard let bytes = spool.readControlFile(NotifierHealth.file) else { return nil }
        return try? JSONDecoder().decode(NotifierHealth.self, from: Data(bytes))
    }

    /// Nil when the command ran and exited 0; otherwise what went wrong.
    private func run(_ command: String, summary: RoundSummary) -> String? {
        var info = stat()
        guard stat(command, &info) == 0 else { return "notify-command \(command) does not exist" }
        guard info.st_mode & S_IFMT == S_IFREG, access(command, X_OK) == 0 else {
            return "notify-command \(command) is not an executable file"
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let input = try? encoder.encode(summary) else { return "unable to encode the summary" }
        // Standard input and error are files, not pipes: a notifier that
        // never reads or writes a lot can neither block nor SIGPIPE the round.
        // Standard input is a file, not a pipe: a notifier that never
        // reads it cannot block the round.
        let inputPath = spool.path + "/tmp/notify.\(summary.round.value).\(getpid()).json"
        defer { unlink(inputPath) }
        guard FileManager.default.createFile(atPath: inputPath, contents: input + Data([0x0A])) else {
            return "unable to stage the notification in \(spool.path)/tmp"
        }
        let ending: ChildProcess.Ending
        let errorBytes: [UInt8]
        do {
            (ending, errorBytes) = try ChildProcess(path: command, standardInput: inputPath).run(
                deadline: settings.timeout)
        } catch {
            return "notify-command \(command) could not start: \(error)"
        }
        let errorText = String(decoding: errorBytes, as: UTF8.self).trimmingSpaces
        let how: String
        switch ending {
        case .exited(0): return nil
        case .exited(let status): how = "exited with status \(status)"
        case .signalled(let signal): how = "was killed by signal \(signal)"
        case .timedOut:
            how = "did not finish within \(Units.describe(settings.timeout)); its process group was killed"
        }
        return "notify-command \(command) \(how)" + (errorText.isEmpty ? "" : ": \(errorText)")
    }
}
