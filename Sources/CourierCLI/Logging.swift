import CourierSpool
import Foundation
import Glibc

/// Standard error as a log: with `<N>` priority prefixes when it is the
/// journal (systemd sets JOURNAL_STREAM to its device and inode), plain
/// otherwise.
enum Logging {
    static func stderrIsJournal(_ environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// `--quiet`: warnings and errors. `--verbose`: everything. Otherwise
    /// every event for the journal, and what a person should see on a
    /// terminal (no line per delivered item).
    /// `above`: a progress line the log lines are printed above.
    static func eventLog(quiet: Bool, verbose: Bool, journal: Bool, above progress: ProgressLine? = nil) -> EventLog {
        let threshold: LogLevel = verbose ? .debug : quiet ? .warning : journal ? .info : .notice
        return EventLog(threshold: threshold) { level, message in
            // One line each: a newline in a name would start a journal
            // line of its own, with a priority of its choosing.
            let message = PrintableText.of(message)
            let line = journal ? "<\(level.rawValue)>\(message)\n" : "courier: \(message)\n"
            if let progress {
                progress.print(line)
            } else {
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
    }
}
