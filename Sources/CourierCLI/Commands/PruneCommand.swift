import CourierConfig
import CourierOperations
import CourierSupport

/// `courier prune [--retention DURATION] [--dry-run]`
enum PruneCommand {
    static let command = Command(
        "prune", summary: "remove ledger days, sent/ entries and tmp/ leftovers past their time",
        usage: "[--retention DURATION] [--dry-run]",
        details: """
            Retention is --retention, else the configuration's, else 183d; kept etags
            (.courier/etags/) no answer renewed go with it too; tmp/ leftovers go after 36h.
            With failed-retention set, failed/ entries go that long after they entered it, each
            with a deleted ledger line. Never touches needsAttention/.
            """,
        options: Options.fields,
        example: "courier prune --dry-run",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var retention: Duration?
        var dryRun = false

        static let fields: [OptionField<Options>] = [
            .value(
                "--retention", "DURATION", "keep this long (183d, 12h…) instead of the configuration's", \.retention),
            .flag("--dry-run", "say what would be removed, and remove nothing", \.dryRun),
        ]
    }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        let dryRun = options.dryRun
        let retention = options.retention
        try operands.none(for: "prune")
        // A broken configuration must not prune with the default in place of
        // the retention it meant; only a missing one falls back.
        let configuration = try invocation.configurationIfAny(readingSecrets: false)
        let session = try invocation.openSession(configuration)
        let keep = retention ?? configuration?.retention ?? Configuration.defaultRetention
        let keepFailed = configuration?.failedRetention
        defer { if !dryRun { invocation.refreshMetrics(configuration, session: session) } }
        let report: PruneReport
        do {
            report = try Pruner(session: session, retention: keep, failedRetention: keepFailed, dryRun: dryRun).run()
        } catch {
            throw .spool(error)
        }
        let verb = dryRun ? "would remove" : "removed"
        for name in report.ledgerFiles { invocation.output.line("\(verb) ledger/\(name)") }
        for name in report.sentEntries { invocation.output.line("\(verb) sent/\(name)") }
        for name in report.failedEntries { invocation.output.line("\(verb) failed/\(name)") }
        // tmp/ is the producers' too: their names are theirs.
        for name in report.temporaryLeftovers { invocation.output.line("\(verb) tmp/\(PrintableText.of(name))") }
        for name in report.entityTags { invocation.output.line("\(verb) .courier/etags/\(name)") }
        invocation.output.line(
            "\(verb) \(report.ledgerFiles.count) ledger files, \(report.sentEntries.count) sent entries, "
                + (keepFailed.map {
                    "\(report.failedEntries.count) failed entries (failed-retention \(Units.describe($0))), "
                }
                    ?? "")
                + "\(report.temporaryLeftovers.count) tmp leftovers, \(report.entityTags.count) etags "
                + "(retention \(Units.describe(keep)))")
    }
}
