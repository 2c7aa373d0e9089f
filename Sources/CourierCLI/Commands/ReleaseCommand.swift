import CourierIdentifiers
import CourierOperations
import CourierSpool
import CourierSupport
import Foundation

/// `courier release NAME`: the next round sends NAME's queued entries
/// again. Releasing a subscriber that is not held does nothing, as `rm -f`.
enum ReleaseCommand {
    static let command = Command(
        "release", summary: "end a hold: the next round sends NAME's entries", usage: "NAME [--json|--output FORMAT]",
        options: Options.fields,
        operands: .subscribers, example: "courier release alpha",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var output = OutputForm()

        static let fields: [OptionField<Options>] = OptionField.json(
            "one JSON object: {subscriber, held, since, reason, queued}", \.output)
    }

    static func run(_ options: Options, _ operand: SubscriberOperand, _ invocation: Invocation) throws(CLIError) {
        let name = operand.name
        let configuration = try invocation.configurationIfAny(readingSecrets: false)
        let session = try invocation.openSession(configuration)
        defer { invocation.refreshMetrics(configuration, session: session) }
        let spool = session.spool
        let hold: Hold?
        do { hold = try Holding(session: session).release(name) } catch { throw .operation(error) }
        let json = options.output.isJSON
        guard let hold else {
            if json {
                invocation.output.json(HoldJSON(notHeld: name.value))
            } else {
                invocation.output.line("\(name) was not held")
            }
            return
        }
        var waiting = 0
        do {
            try spool.forEachItem(in: .queued) { item in
                if item.entry?.subscriber == name { waiting += 1 }
            }
        } catch {
            throw .spool(error)
        }
        if json {
            invocation.output.json(HoldJSON(hold, held: false, queued: waiting))
            return
        }
        invocation.output.line(
            "\(name) released (held since \(hold.since.rfc3339)); the next round sends its \(waiting) queued "
                + (waiting == 1 ? "entry" : "entries"))
    }
}
