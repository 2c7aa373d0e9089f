import CourierPosix
import CourierSpool
import Glibc

/// `courier check` and `courier init`: what is wrong with a spool's setup.
package struct SpoolCheck {
    package enum Severity: String, Sendable {
        case warning, fault
    }

    package struct Finding: Sendable, CustomStringConvertible {
        package let severity: Severity
        package let message: String
        package var description: String { "\(severity.rawValue): \(message)" }

        package init(severity: Severity, message: String) {
            self.severity = severity
            self.message = message
        }
    }

    let spool: Spool

    package init(spool: Spool) { self.spool = spool }

    package func run() -> [Finding] {
        var findings: [Finding] = []
        if let root = try? spool.root.descriptor.status() {
            if root.mode & 0o002 != 0 {
                findings.append(
                    Finding(
                        severity: .fault,
                        message: "\(spool.path) is writable by everyone (mode \(octal(root.mode))); use 0750"))
            }
            let folders: [(String, DirectoryHandle)] =
                SpoolState.allCases.map { ($0.rawValue, spool.directory($0)) } + [
                    ("tmp", spool.tmp), ("ledger", spool.ledgerDirectory), (".courier", spool.control),
                ]
            for (name, handle) in folders {
                guard let status = try? handle.descriptor.status() else { continue }
                if status.device != root.device {
                    findings.append(
                        Finding(
                            severity: .fault,
                            message:
                                "\(name)/ is on another file system than \(spool.path); rename(2) cannot move items there"
                        ))
                }
                if status.mode & 0o002 != 0 {
                    findings.append(
                        Finding(
                            severity: .fault, message: "\(name)/ is writable by everyone (mode \(octal(status.mode)))"))
                }
            }
        }
        if access(spool.path + "/queued", W_OK) != 0 {
            findings.append(Finding(severity: .fault, message: "this user cannot write to \(spool.path)/queued"))
        }
        return findings
    }

    private func octal(_ mode: UInt32) -> String { "0" + String(mode, radix: 8) }
}
