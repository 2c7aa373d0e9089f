import CourierIdentifiers
import CourierOperations
import CourierSpool
import CourierSupport

/// `courier hold NAME [--reason TEXT]`: rounds send nothing to NAME until
/// it is released; intake still takes its records, which wait in queued/.
enum HoldCommand {
    static let command = Command(
        "hold", summary: "send subscriber NAME nothing until it is released (.courier/held/NAME)",
        usage: "NAME [--reason TEXT] [--json|--output FORMAT]",
        details: """
            Intake still takes NAME's records; they wait in queued/. touch .courier/held/NAME
            does the same without the held ledger line. Holding again keeps since when.
            """,
        options: Options.fields,
        operands: .subscribers,
        example: "courier hold alpha --reason 'maintenance until 12:00'",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var reason: String?
        var output = OutputForm()

        static let fields: [OptionField<Options>] =
            [.value("--reason", "TEXT", "why, as status shows it", \.reason)]
            + OptionField.json("one JSON object: {subscriber, held, since, reason}", \.output)
    }

    static func run(_ options: Options, _ operand: SubscriberOperand, _ invocation: Invocation) throws(CLIError) {
        let reason = options.reason ?? ""
        let name = operand.name
        // The secrets too: a reason that names one is kept redacted.
        let configuration = try invocation.configuration(readingSecrets: true)
        // A hold on a name no section has would hold nothing: a typo.
        guard configuration.subscriber(named: name) != nil else { throw .operation(.unknownSubscriber(name.value)) }
        let session = try invocation.openSession(configuration)
        defer { invocation.refreshMetrics(configuration, session: session) }
        let hold: Hold
        do { hold = try Holding(session: session).hold(name, reason: reason) } catch { throw .operation(error) }
        if options.output.isJSON {
            invocation.output.json(HoldJSON(hold, held: true))
            return
        }
        invocation.output.line(
            "\(name) held since \(hold.since.rfc3339): rounds send it nothing until `courier release \(name)`")
    }
}
