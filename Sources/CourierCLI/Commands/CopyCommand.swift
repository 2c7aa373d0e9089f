import CourierIdentifiers
import CourierOperations
import CourierSpool

/// `courier copy ENTRY [--subscriber NAME]`
enum CopyCommand {
    static let command = Command(
        "copy", summary: "a deliberate duplicate with the new key ID#N (N: next unused)",
        usage: "ENTRY [--subscriber NAME]",
        options: [
            .value("--subscriber", "NAME", "queue the copy for this subscriber instead", completion: .subscribers)
        ],
        operands: .entries([.needsAttention, .failed, .sent, .queued, .awaitingRoute]),
        example: "courier copy w-2026-11-30-0700@alpha --subscriber beta",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        let subscriberText = try arguments.option("--subscriber")
        let rest = try arguments.positionals()
        guard rest.count == 1, let text = rest.first else { throw .usage("copy ENTRY [--subscriber NAME]") }
        var subscriber: SubscriberName?
        if let subscriberText {
            guard let name = SubscriberName(subscriberText) else {
                throw .usage("\(subscriberText) is not a subscriber name")
            }
            subscriber = name
        }
        let configuration = try invocation.configuration(readingSecrets: false)
        let session = try invocation.openSession(configuration)
        defer { invocation.refreshMetrics(configuration, session: session) }
        do throws(OperationError) {
            let items = try session.spool.resolve(text)
            guard items.count == 1, let item = items.first else {
                throw .ambiguous(text, items.map(\.name.description))
            }
            let copy = try Copier(session: session, configuration: configuration).copy(item, to: subscriber)
            invocation.output.line("queued/\(copy.fileName) (a copy of \(item.state.rawValue)/\(item.name))")
        } catch {
            throw .operation(error)
        }
    }
}
