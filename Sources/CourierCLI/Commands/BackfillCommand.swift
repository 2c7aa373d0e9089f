import CourierIdentifiers
import CourierOperations
import CourierPosix
import CourierSpool

/// `courier backfill --since DATE --until DATE --subscriber NAME [--from DIR] [--dry-run]`
enum BackfillCommand {
    static let command = Command(
        "backfill", summary: "re-send history to one subscriber, with the records' own keys",
        usage: "--since DATE --until DATE --subscriber NAME [--from DIR] [--dry-run]",
        details: """
            Queues each record whose time (else its file's mtime) falls in [since, until),
            from sent/ (one per id) or from the record files in DIR.
            """,
        options: Options.fields,
        example: "courier backfill --since 2026-11-01 --until 2026-11-30 --subscriber beta --dry-run",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var since: DayOrTime?
        var until: DayOrTime?
        var subscriber: SubscriberName?
        var from: String?
        var dryRun = false

        static let fields: [OptionField<Options>] = [
            .value("--since", "DATE", "from this day (YYYY-MM-DD) or RFC 3339 time", \.since),
            .value("--until", "DATE", "up to this time, exclusive; a bare date includes that day", \.until),
            .value("--subscriber", "NAME", "the subscriber to queue them for", \.subscriber, completion: .subscribers),
            .value("--from", "DIR", "the record files in DIR instead of sent/", \.from, completion: .directories),
            .flag("--dry-run", "say what would be queued, and queue nothing", \.dryRun),
        ]
    }

    static var usage: String { "backfill " + command.usage }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        let dryRun = options.dryRun
        guard let since = options.since?.time, let untilGiven = options.until, let subscriber = options.subscriber
        else { throw .usage(usage) }
        try operands.none(for: "backfill")
        // A bare date in --until means the whole of that day.
        let until = untilGiven.isDay ? untilGiven.time + .seconds(86_400) : untilGiven.time
        guard since < until else { throw .usage("--since must come before --until") }
        let configuration = try invocation.configuration(readingSecrets: false)
        let session = try invocation.openSession(configuration)
        defer { if !dryRun { invocation.refreshMetrics(configuration, session: session) } }
        let report: Backfill.Report
        do {
            report = try Backfill(session: session, configuration: configuration).run(
                since: since, until: until, subscriber: subscriber, from: options.from.map { .directory($0) } ?? .sent,
                dryRun: dryRun)
        } catch {
            throw .operation(error)
        }
        let output = invocation.output
        for name in report.queued { output.line("\(dryRun ? "would queue" : "queued") \(name)") }
        for name in report.alreadyPending { output.line("already waiting: \(name)") }
        for reason in report.skipped { output.error("skipped \(reason)") }
        for record in report.notTaken { output.line("not taken by \(subscriber): \(record)") }
        output.line(
            "\(report.queued.count) \(dryRun ? "would be queued" : "queued") for \(subscriber), "
                + "\(report.alreadyPending.count) already waiting, \(report.notTaken.count) of other kinds, "
                + "\(report.skipped.count) skipped")
    }
}
