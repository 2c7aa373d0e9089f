import CourierOperations
import CourierSpool

/// `courier why ENTRY`: the item's ledger history and where it is now.
enum WhyCommand {
    static let command = Command(
        "why", summary: "the item's ledger history, where it is now, and why", usage: "ENTRY [--json|--output FORMAT]",
        details: """
            For a batch item it also shows what the server said of it (status, server_id,
            etag, current_etag, message) and the etag kept for the entity its record writes.
            """,
        options: Options.fields,
        operands: .entries([.needsAttention, .failed, .sent, .queued, .awaitingRoute]),
        example: "courier why w-2026-11-30-0700",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var output = OutputForm()

        static let fields: [OptionField<Options>] = OptionField.json(
            "one JSON object: {query, items:[{entry, state, key, subscriber, why, notes, history}]}", \.output)
    }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        let text = try operands.one("why ENTRY")
        let spool = try invocation.readSpool()
        let items: [SpoolItem]
        do { items = try spool.resolve(text) } catch { throw .operation(error) }
        let history = History(spool: spool)
        let json = options.output.isJSON
        var objects: [WhyJSON.Item] = []
        // Without a configuration `why` still explains, less precisely; a
        // broken one is said (exit 78), as status does, not passed over.
        let configuration = try invocation.configurationIfAny(readingSecrets: false)
        for (index, item) in items.enumerated() {
            let lines: [LedgerLine]
            let context: Explanation.Context
            do {
                lines = try history.lines(for: item)
                context = try .of(item, in: spool, configuration: configuration)
            } catch {
                throw .spool(error)
            }
            let why = Explanation.explain(
                item, last: lines.last(where: { $0.event != .acknowledged && $0.event != .resent }), context: context)
            let notes = Explanation.serverNotes(for: item, history: lines, in: spool)
            if json {
                objects.append(
                    WhyJSON.Item(item: ItemJSON(item), why: why, notes: notes, history: lines.map(LedgerLineJSON.init)))
                continue
            }
            if index > 0 { invocation.output.line() }
            invocation.output.line("\(PrintableText.of(item.name)) is in \(item.state.rawValue)/")
            // Both quote ledger details: a dropped file's name, a server's words.
            invocation.output.line(PrintableText.of(why))
            for note in notes { invocation.output.line(PrintableText.of(note)) }
            if lines.isEmpty {
                invocation.output.line("no ledger lines (pruned, or moved in by hand)")
            } else {
                invocation.output.line("history:")
                invocation.output.table(lines.map { LogCommand.row($0) })
            }
        }
        if json { invocation.output.json(WhyJSON(query: text, items: objects)) }
    }
}
