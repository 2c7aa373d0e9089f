import CourierOperations
import CourierSpool

/// `courier init`: create the spool (mode 0750) and check it.
enum InitCommand {
    static let command = Command(
        "init", summary: "create the spool (mode 0750) and check it",
        example: "courier --spool /var/spool/courier init",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        try arguments.noPositionals("init")
        let path = try invocation.spoolLocation()
        let spool: Spool
        do { spool = try Spool.create(at: path) } catch { throw .spool(error) }
        invocation.output.line("spool ready at \(path)")
        let findings = SpoolCheck(spool: spool).run()
        for finding in findings { invocation.output.error(finding.description) }
        if findings.contains(where: { $0.severity == .fault }) { throw .reported(.ioError) }
    }
}
