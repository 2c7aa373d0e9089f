import CourierOperations
import CourierSpool

/// `courier check`: validate the configuration (secrets included) and the
/// spool; non-zero on any fault.
enum CheckCommand {
    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        try arguments.noPositionals("check")
        let configuration = try invocation.configuration(readingSecrets: true)
        let names = configuration.subscribers.map(\.name.value).joined(separator: ", ")
        invocation.output.line("config \(configuration.file ?? "-"): ok (subscribers: \(names))")
        for warning in configuration.secretFileWarnings() { invocation.output.line("warning: \(warning)") }
        let spool: Spool
        do { spool = try Spool(path: configuration.spool) } catch { throw .spool(error) }
        let findings = SpoolCheck(spool: spool).run()
        for finding in findings { invocation.output.line(finding.description) }
        if findings.contains(where: { $0.severity == .fault }) { throw .reported(.ioError) }
        invocation.output.line("spool \(spool.path): ok")
    }
}
