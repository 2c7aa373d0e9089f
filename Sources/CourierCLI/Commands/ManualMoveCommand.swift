import CourierIdentifiers
import CourierOperations
import CourierPosix
import CourierSpool
import CourierSupport
import Foundation

/// `courier ack`, `resend` and `delete`: a person's moves, on named items
/// or on every item a filter picks.
enum ManualMoveCommand {
    enum Action: String {
        case ack, resend, delete

        var states: [SpoolState] {
            switch self {
            case .ack: return ManualMoves.acknowledgeStates
            case .resend: return ManualMoves.resendStates
            case .delete: return ManualMoves.deleteStates
            }
        }
    }

    static let usage = "[ENTRY...|-] [--all] [--subscriber NAME] [--state STATE] [--older-than DURATION] [--json]"

    static func options(_ action: Action) -> [Option] {
        [
            .flag("--all", "every item in \(action.states.map { "\($0.rawValue)/" }.joined(separator: " and "))"),
            .value("--subscriber", "NAME", "only this subscriber's items"),
            .value(
                "--state", "STATE", "only items in this state",
                completion: .words(action.states.map(\.rawValue))),
            .value("--older-than", "DURATION", "only items whose file is older (1h, 2d)"),
            .flag("--json", "one JSON object: what moved and what did not"),
        ]
    }

    static let details = """
        Names are entries (KEY@SUBSCRIBER), keys, or file names; `-` reads names from standard input,
        one per line. With no names, --all or a filter picks every matching item. A name that cannot
        be moved is reported and the rest still move: exit 0 when all moved, 65 when some did not.
        """

    static let ackCommand = Command(
        "ack", summary: "needsAttention/ -> failed/ (accept the failure)", usage: usage, details: details,
        options: options(.ack), operands: .entries(Action.ack.states),
        example: "courier ack --subscriber alpha --older-than 7d",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation, action: .ack) })

    static let resendCommand = Command(
        "resend", summary: "failed/ or needsAttention/ -> queued/ (same key)", usage: usage, details: details,
        options: options(.resend), operands: .entries(Action.resend.states),
        example: "courier resend --all --subscriber alpha",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation, action: .resend) })

    static let deleteCommand = Command(
        "delete", summary: "remove items from needsAttention/ or failed/ (ledger: deleted)", usage: usage,
        details: details, options: options(.delete), operands: .entries(Action.delete.states),
        example: "courier delete --state failed --older-than 30d",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation, action: .delete) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation, action: Action) throws(CLIError) {
        let selection = try selection(&arguments, action: action)
        let json = arguments.flag("--json")
        let configuration = try invocation.configurationIfAny(readingSecrets: false)
        let session = try invocation.openSession(configuration)
        defer { invocation.refreshMetrics(configuration, session: session) }
        let report: ManualMoves.Report
        do {
            let (items, refused) = try selection.resolve(
                in: session.spool, allowed: action.states, session: session)
            let moves = ManualMoves(session: session)
            var done: ManualMoves.Report
            switch action {
            case .ack: done = try moves.acknowledge(items)
            case .resend: done = try moves.resend(items)
            case .delete: done = try moves.delete(items)
            }
            done.refused = refused + done.refused
            report = done
        } catch {
            throw .operation(error)
        }
        if json {
            print(report, action: action, invocation.output)
        } else {
            describe(report, action, invocation.output)
        }
        if !report.refused.isEmpty { throw .reported(.dataError) }
    }

    static func selection(_ arguments: inout Arguments, action: Action) throws(CLIError) -> ItemSelection {
        var selection = ItemSelection()
        for name in try arguments.positionals() {
            selection.namesGiven = true
            if name == "-" {
                let input = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                selection.names += input.split(whereSeparator: \.isNewline).map { String($0).trimmingSpaces }
                    .filter { !$0.isEmpty }
            } else {
                selection.names.append(name)
            }
        }
        selection.all = arguments.flag("--all")
        if let text = try arguments.option("--subscriber") {
            guard let name = SubscriberName(text) else { throw .usage("--subscriber \(text) is not a subscriber name") }
            selection.subscriber = name
        }
        if let text = try arguments.option("--state") {
            guard let state = SpoolState(rawValue: text.hasSuffix("/") ? String(text.dropLast()) : text),
                action.states.contains(state)
            else {
                throw .usage(
                    "--state \(text): \(action.rawValue) takes \(action.states.map(\.rawValue).joined(separator: " or "))"
                )
            }
            selection.states = [state]
        }
        if let text = try arguments.option("--older-than") {
            guard let duration = Units.duration(text) else { throw .usage("--older-than \(text) is not a duration") }
            selection.olderThan = duration
        }
        if selection.isEmpty {
            throw .usage("\(action.rawValue): name entries, `-` for standard input, or pick with --all or a filter")
        }
        if selection.all && selection.namesGiven { throw .usage("--all picks every item: give it no names") }
        return selection
    }

    static func describe(_ report: ManualMoves.Report, _ action: Action, _ output: Output) {
        for (item, target) in report.moved {
            output.line("\(item.state.rawValue)/\(item.name) -> \(target.map { "\($0.rawValue)/" } ?? "deleted")")
        }
        for refusal in report.refused { output.error("not moved: \(refusal.name): \(refusal.reason)") }
        if !report.refused.isEmpty {
            output.error(
                "\(action.rawValue): \(report.moved.count) moved, \(report.refused.count) not (see above)")
        }
    }

    /// `{"moved":[{"entry","from","to"}],"notMoved":[{"entry","reason"}]}`;
    /// `to` is null for a deletion.
    static func print(_ report: ManualMoves.Report, action: Action, _ output: Output) {
        let object: [String: Any] = [
            "action": action.rawValue,
            "moved": report.moved.map { item, target in
                [
                    "entry": item.name.description, "from": item.state.rawValue,
                    "to": target.map { $0.rawValue as Any } ?? NSNull(),
                ] as [String: Any]
            },
            "notMoved": report.refused.map { ["entry": $0.name, "reason": $0.reason] },
        ]
        output.json(object)
    }
}
