import CourierOperations
import CourierSpool

/// `courier why ENTRY`: the item's ledger history and where it is now.
enum WhyCommand {
    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        let rest = try arguments.positionals()
        guard rest.count == 1, let text = rest.first else { throw .usage("why ENTRY") }
        let spool = try invocation.openSpool()
        let items: [SpoolItem]
        do { items = try spool.resolve(text) } catch { throw .operation(error) }
        let history = History(spool: spool)
        // Without a configuration `why` still explains, less precisely.
        let configuration = try? invocation.configurationIfAny(readingSecrets: false)
        for (index, item) in items.enumerated() {
            if index > 0 { invocation.output.line() }
            let lines: [LedgerLine]
            let context: Explanation.Context
            do {
                lines = try history.lines(for: item)
                context = try .of(item, in: spool, configuration: configuration ?? nil)
            } catch {
                throw .spool(error)
            }
            invocation.output.line("\(item.name) is in \(item.state.rawValue)/")
            invocation.output.line(
                Explanation.explain(
                    item, last: lines.last(where: { $0.event != .acknowledged && $0.event != .resent }),
                    context: context))
            if lines.isEmpty {
                invocation.output.line("no ledger lines (pruned, or moved in by hand)")
            } else {
                invocation.output.line("history:")
                invocation.output.table(lines.map { LogCommand.row($0) })
            }
        }
    }
}
