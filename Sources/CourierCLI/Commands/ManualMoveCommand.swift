import CourierOperations
import CourierSpool

/// `courier ack ENTRY...` and `courier resend ENTRY...`.
enum ManualMoveCommand {
    static let ackCommand = Command(
        "ack", summary: "needsAttention/ -> failed/ (accept the failure)", usage: "ENTRY...",
        operands: .entries([.needsAttention]), example: "courier ack w-2026-11-30-0700@alpha",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation, resend: false) })

    static let resendCommand = Command(
        "resend", summary: "failed/ or needsAttention/ -> queued/ (same key)", usage: "ENTRY...",
        operands: .entries([.needsAttention, .failed]), example: "courier resend w-2026-11-30-0700@alpha",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation, resend: true) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation, resend: Bool) throws(CLIError) {
        let command = resend ? "resend" : "ack"
        let texts = try arguments.positionals()
        guard !texts.isEmpty else { throw .usage("\(command) ENTRY...") }
        let spool = try invocation.openSpool()
        defer { invocation.refreshMetrics(try? invocation.configurationIfAny(readingSecrets: false), spool: spool) }
        var items: [SpoolItem] = []
        do {
            for text in texts { items += try spool.resolve(text) }
        } catch {
            throw .operation(error)
        }
        let moves = ManualMoves(spool: spool)
        do {
            if resend { try moves.resend(items) } else { try moves.acknowledge(items) }
        } catch {
            throw .operation(error)
        }
        let target = resend ? "queued/" : "failed/"
        for item in items { invocation.output.line("\(item.state.rawValue)/\(item.name) -> \(target)") }
    }
}
