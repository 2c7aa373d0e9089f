import CourierOperations
import CourierSpool

/// `courier check`: validate the configuration (secrets included) and the
/// spool; non-zero on any fault.
enum CheckCommand {
    static let command = Command(
        "check", summary: "validate the configuration and the spool; non-zero on a fault",
        details: """
            Reads the secret files too, and warns when one is readable by others, when
            notify-command cannot be run or failed the last time it ran. A spool
            fault (world-writable, a folder on another file system, queued/ not writable)
            exits 74.
            """,
        example: "courier --config /etc/courier/courier.conf check",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        try arguments.noPositionals("check")
        let configuration = try invocation.configuration(readingSecrets: true)
        let names = configuration.subscribers.map(\.name.value).joined(separator: ", ")
        invocation.output.line("config \(configuration.file ?? "-"): ok (subscribers: \(names))")
        for warning in configuration.secretFileWarnings() { invocation.output.line("warning: \(warning)") }
        for warning in configuration.tokenExpiryWarnings() { invocation.output.line("warning: \(warning)") }
        let spool: Spool
        do { spool = try Spool(path: configuration.spool) } catch { throw .spool(error) }
        let findings =
            SpoolCheck(spool: spool).run() + NotifierCheck(configuration: configuration, spool: spool).run()
        for finding in findings { invocation.output.line(finding.description) }
        if findings.contains(where: { $0.severity == .fault }) { throw .reported(.ioError) }
        invocation.output.line("spool \(spool.path): ok")
    }
}
