import CourierIdentifiers
import CourierOperations
import CourierSpool

/// `courier copy ENTRY [--subscriber NAME]`
enum CopyCommand {
    static let command = Command(
        "copy", summary: "a deliberate duplicate with the new key ID#N (N: next unused)",
        usage: "ENTRY [--subscriber NAME]",
        options: Options.fields,
        operands: .entries([.needsAttention, .failed, .sent, .queued, .awaitingRoute]),
        example: "courier copy w-2026-11-30-0700@alpha --subscriber beta",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var subscriber: SubscriberName?

        static let fields: [OptionField<Options>] = [
            .value(
                "--subscriber", "NAME", "queue the copy for this subscriber instead", \.subscriber,
                completion: .subscribers)
        ]
    }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        let text = try operands.one("copy ENTRY [--subscriber NAME]")
        let configuration = try invocation.configuration(readingSecrets: false)
        let session = try invocation.openSession(configuration)
        defer { invocation.refreshMetrics(configuration, session: session) }
        do throws(OperationError) {
            let items = try session.spool.resolve(text)
            guard items.count == 1, let item = items.first else {
                throw .ambiguous(text, items.map(\.name.description))
            }
            let copy = try Copier(session: session, configuration: configuration).copy(item, to: options.subscriber)
            invocation.output.line("queued/\(copy.fileName) (a copy of \(item.state.rawValue)/\(item.name))")
        } catch {
            throw .operation(error)
        }
    }
}
