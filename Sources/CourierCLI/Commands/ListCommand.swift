import CourierOperations
import CourierPosix
import CourierSpool
import CourierSupport
import Foundation

/// `courier list [STATE] [--subscriber NAME] [--older-than DURATION] [--json|--output FORMAT]`:
/// one line per item.
enum ListCommand {
    static let command = Command(
        "list", summary: "one line per item, with its state, key, subscriber, kind and last event",
        usage: "[STATE] [--subscriber NAME] [--older-than DURATION] [--json|--output FORMAT]",
        details: """
            Without STATE, every state but sent/. Rows come in the order the folders give them,
            as soon as each is read (pipe to sort for another).
            """,
        options: Options.fields,
        operands: .words(SpoolState.allCases.map(\.rawValue)), example: "courier list queued --older-than 1h",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        /// A name, or `-` for flagged and intake files: a removed
        /// subscriber's entries are still listed.
        var subscriber: String?
        var olderThan: Duration?
        var output = OutputForm()

        static let fields: [OptionField<Options>] =
            [
                .value(
                    "--subscriber", "NAME", "this subscriber's items only; - for flagged and intake files",
                    \.subscriber, completion: .subscribers),
                .value(
                    "--older-than", "DURATION", "items whose file is older than this (30m, 2h, 7d), by mtime",
                    \.olderThan),
            ] + OptionField.json("one JSON object per line", \.output)
    }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        let json = options.output.isJSON
        guard operands.count <= 1 else { throw .usage("list takes at most one STATE") }
        var filter = Listing.Filter()
        if let name = operands.first {
            guard let state = SpoolState(rawValue: name) else {
                throw .usage("\(name) is not a state (\(SpoolState.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            filter.states = [state]
        }
        filter.subscriber = options.subscriber
        filter.olderThan = options.olderThan
        let spool = try invocation.readSpool()
        let now = Timestamp.now()
        let output = invocation.output
        var table = TableWriter(output, header: ["STATE", "KEY", "SUBSCRIBER", "KIND", "TIME", "AGE", "LAST"])
        var rows = 0
        do {
            try Listing(spool: spool).forEach(filter, now: now) { row in
                if json {
                    output.line(object(row, now: now))
                } else {
                    table.add(cells(row, now: now))
                }
                rows += 1
            }
        } catch {
            throw .spool(error)
        }
        if !json { table.flush() }
        if rows == 0, let subscriber = filter.subscriber { try check(subscriber: subscriber, invocation) }
    }

    static func cells(_ row: Listing.Row, now: Timestamp) -> [String] {
        let last =
            row.last.map { last in
                LedgerAnswer(column: last.status).status.map { "\(last.event.rawValue) \($0)" } ?? last.event.rawValue
            } ?? "-"
        return [
            row.item.state.rawValue, row.item.ledgerKey, row.item.ledgerSubscriber, row.kind ?? "-", row.time ?? "-",
            Age.describe(now - row.takenIn), last,
        ]
    }

    static func object(_ row: Listing.Row, now: Timestamp) -> String {
        Output.jsonText(
            ListRowJSON(
                item: ItemJSON(row.item), kind: row.kind, time: row.time,
                ageSeconds: (now - row.takenIn).nanoseconds / 1_000_000_000, lastEvent: row.last?.event,
                lastStatus: row.last?.status)) ?? "null"
    }

    /// Nothing listed for a name the configuration does not know: most
    /// likely a typo, said rather than left as an empty answer. A removed
    /// subscriber's entries (in needsAttention/) were listed, so they never
    /// get here.
    static func check(subscriber: String, _ invocation: Invocation) throws(CLIError) {
        // A broken configuration is an error (exit 78), never taken for none.
        guard subscriber != "-", let configuration = try invocation.configurationIfAny(readingSecrets: false)
        else { return }
        let configured = configuration.subscribers.map(\.name.value)
        guard !configured.contains(subscriber) else { return }
        throw .usage(
            "--subscriber \(subscriber): no such subscriber in the configuration, and no item of it "
                + "(configured: \(configured.isEmpty ? "none" : configured.joined(separator: ", ")))")
    }
}

/// `42s`, `5m`, `3h`, `2d`: an age at a glance.
enum Age {
    static func describe(_ duration: Duration) -> String {
        let seconds = max(0, duration.nanoseconds / 1_000_000_000)
        if seconds < 120 { return "\(seconds)s" }
        if seconds < 7200 { return "\(seconds / 60)m" }
        if seconds < 172_800 { return "\(seconds / 3600)h" }
        return "\(seconds / 86400)d"
    }
}
