import CourierConfig
import CourierRound
import CourierSpool
import Glibc

/// `courier check`'s view of `notify-command`: a program that cannot run,
/// or that failed the last time it ran, is worth a warning before the
/// night it was meant to wake someone.
package struct NotifierCheck {
    let configuration: Configuration
    let spool: Spool

    package init(configuration: Configuration, spool: Spool) {
        self.configuration = configuration
        self.spool = spool
    }

    package func run() -> [SpoolCheck.Finding] {
        guard let command = configuration.notifyCommand, configuration.notify != .off else { return [] }
        var findings: [SpoolCheck.Finding] = []
        if access(command, X_OK) != 0 {
            findings.append(
                SpoolCheck.Finding(
                    severity: .warning,
                    message: "notify-command \(command) cannot be run (\(String(cString: strerror(errno))))"))
        }
        if let health = Notifier.health(in: spool), !health.working {
            findings.append(
                SpoolCheck.Finding(
                    severity: .warning,
                    message: "the notifier failed after round \(health.round) at \(health.time): \(health.detail)"))
        }
        return findings
    }
}
