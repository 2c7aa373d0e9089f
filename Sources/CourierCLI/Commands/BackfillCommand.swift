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
        options: [
            .value("--since", "DATE", "from this day (YYYY-MM-DD) or RFC 3339 time"),
            .value("--until", "DATE", "up to this time, exclusive; a bare date includes that day"),
            .value("--subscriber", "NAME", "the subscriber to queue them for", completion: .subscribers),
            .value("--from", "DIR", "the record files in DIR instead of sent/", completion: .directories),
            .flag("--dry-run", "say what would be queued, and queue nothing"),
        ],
        example: "courier backfill --since 2026-11-01 --until 2026-11-30 --subscriber beta --dry-run",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static var usage: String { "backfill " + command.usage }

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        let dryRun = arguments.flag("--dry-run")
        guard let sinceText = try arguments.option("--since"), let untilText = try arguments.option("--until"),
            let subscriberText = try arguments.option("--subscriber")
        else { throw .usage(usage) }
        let from = try arguments.option("--from")
        try arguments.noPositionals("backfill")
        guard let since = Timestamp(dateOrTime: sinceText) else {
            throw .usage("--since \(sinceText) is not YYYY-MM-DD or RFC 3339")
        }
        guard var until = Timestamp(dateOrTime: untilText) else {
            throw .usage("--until \(untilText) is not YYYY-MM-DD or RFC 3339")
        }
        // A bare date in --until means the whole of that day.
        if untilText.count == 10 { until = until + .seconds(86_400) }
        guard since < until else { throw .usage("--since must come before --until") }
        guard let subscriber = SubscriberName(subscriberText) else {
            throw .usage("\(subscriberText) is not a subscriber name")
        }
        let configuration = try invocation.configuration(readingSecrets: false)
        let session = try invocation.openSession(configuration)
        defer { if !dryRun { invocation.refreshMetrics(configuration, session: session) } }
        let report: Backfill.Report
        do {
            report = try Backfill(session: session, configuration: configuration).run(
                since: since, until: until, subscriber: subscriber, from: from.map { .directory($0) } ?? .sent,
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
