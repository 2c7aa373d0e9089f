import CourierOperations
import CourierSpool
import Foundation

/// `courier check`: validate the configuration (secrets included) and the
/// spool; non-zero on any fault.
enum CheckCommand {
    static let command = Command(
        "check", summary: "validate the configuration and the spool; non-zero on a fault",
        usage: "[--json|--output FORMAT]",
        details: """
            Reads the secret files too, and warns when one is readable by others, when
            notify-command cannot be run or failed the last time it ran, and when
            max-record-size exceeds what a batch subscriber's max-batch-bytes holds. A spool
            fault (world-writable, a folder on another file system, queued/ not writable)
            exits 74.
            """,
        options: Options.fields,
        example: "courier --config /etc/courier/courier.conf check",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var output = OutputForm()

        static let fields: [OptionField<Options>] = OptionField.json(
            "one JSON object: {config, spool, ok, subscribers, catalogs, findings}", \.output)
    }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        try operands.none(for: "check")
        let json = options.output.isJSON
        let configuration = try invocation.configuration(readingSecrets: true)
        let spool = try invocation.readSpool()
        let warnings = (configuration.secretFileWarnings() + configuration.tokenExpiryWarnings().map(\.description)).map
        {
            SpoolCheck.Finding(severity: .warning, message: $0)
        }
        let findings =
            warnings + BatchLimitCheck(configuration: configuration).run() + SpoolCheck(spool: spool).run()
            + NotifierCheck(configuration: configuration, spool: spool).run()
        let ok = !findings.contains { $0.severity == .fault }
        if json {
            invocation.output.json(
                CheckJSON(
                    config: configuration.file, spool: spool.path, ok: ok,
                    subscribers: configuration.subscribers.map(\.name.value),
                    catalogs: configuration.catalogs.map(\.name.value),
                    findings: findings.map { .init(severity: $0.severity.rawValue, message: $0.message) }))
        } else {
            let names = configuration.subscribers.map(\.name.value).joined(separator: ", ")
            invocation.output.line("config \(configuration.file ?? "-"): ok (subscribers: \(names))")
            for finding in findings { invocation.output.line(finding.description) }
            if ok { invocation.output.line("spool \(spool.path): ok") }
        }
        if !ok { throw .reported(.ioError) }
    }
}
