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

        /// What `--all` or a filter looks in when `--state` names none.
        var pickStates: [SpoolState] { self == .delete ? ManualMoves.deletePickStates : states }

        /// The word of the totals line, as the ledger's event: postsuper's
        /// `Requeued: 5000`.
        var done: String {
            switch self {
            case .ack: return "acknowledged"
            case .resend: return "resent"
            case .delete: return "deleted"
            }
        }
    }

    static let usage =
        "[ENTRY...|-] [--all] [--subscriber NAME] [--state STATE] [--older-than DURATION] [--json|--output FORMAT]"

    struct Options: CommandOptions {
        var all = false
        var subscriber: SubscriberName?
        var state: SpoolState?
        var olderThan: Duration?
        var output = OutputForm()

        /// The same options for the three, each with its own states.
        static func fields(_ action: Action) -> [OptionField<Options>] {
            [
                .flag(
                    "--all",
                    "every entry in \(action.pickStates.map { "\($0.rawValue)/" }.joined(separator: " and "))"
                        + (action == .delete ? " (queued/ only with --state queued)" : ""), \.all),
                .value("--subscriber", "NAME", "only this subscriber's items", \.subscriber, completion: .subscribers),
                .value(
                    "--state", "STATE", "only items in this state", \.state,
                    completion: .words(action.states.map(\.rawValue)),
                    expected: "\(action.rawValue) takes \(action.states.map(\.rawValue).joined(separator: " or "))",
                    read: { text in
                        // `failed/`, as a shell completes a folder, is failed.
                        SpoolState(rawValue: text.hasSuffix("/") ? String(text.dropLast()) : text)
                            .flatMap { action.states.contains($0) ? $0 : nil }
                    }),
                .value("--older-than", "DURATION", "only items whose file is older (1h, 2d)", \.olderThan),
            ] + OptionField.json("one JSON object: what moved and what did not", \.output)
        }
    }

    static let details = """
        Names are entries (KEY@SUBSCRIBER), keys, or file names; `-` reads names from standard input,
        one per line. With no names, --all or a filter picks every matching entry; the flagged files
        (invalid-…) it passes over are said, and are acted on by name. A name that cannot be moved
        is reported and the rest still move: exit 0 when all moved, 65 when some did not. The last
        line is the total, as postsuper's: `resent: 5000`.
        """

    static let deleteDetails =
        details + """

            Entries in queued/ (postsuper -d) are deleted by name, or with --state queued; delete
            then waits for a running round, so that none is being sent as it goes.
            """

    static let ackCommand = Command(
        "ack", summary: "needsAttention/ -> failed/ (accept the failure)", usage: usage, details: details,
        options: Options.fields(.ack), operands: .entries(Action.ack.states),
        example: "courier ack --subscriber alpha --older-than 7d",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation, action: .ack) })

    static let resendCommand = Command(
        "resend", summary: "failed/ or needsAttention/ -> queued/ (same key)", usage: usage, details: details,
        options: Options.fields(.resend), operands: .entries(Action.resend.states),
        example: "courier resend --all --subscriber alpha",
        run: { options, operands, invocation throws(CLIError) in
            try run(options, operands, invocation, action: .resend)
        })

    static let deleteCommand = Command(
        "delete", summary: "remove items from needsAttention/, failed/ or queued/ (ledger: deleted)",
        usage: usage, details: deleteDetails, options: Options.fields(.delete),
        operands: .entries(Action.delete.states), example: "courier delete --state failed --older-than 30d",
        run: { options, operands, invocation throws(CLIError) in
            try run(options, operands, invocation, action: .delete)
        })

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation, action: Action)
        throws(CLIError)
    {
        let selection = try selection(options, operands, action: action)
        let json = options.output.isJSON
        let configuration = try invocation.configurationIfAny(readingSecrets: false)
        let session = try invocation.openSession(configuration)
        defer { invocation.refreshMetrics(configuration, session: session) }
        let report: ManualMoves.Report
        var resolved: ItemSelection.Resolved
        var roundLock: RoundLock?
        do {
            resolved = try selection.choose(
                in: session.spool, allowed: action.states, picking: action.pickStates, session: session)
            if resolved.items.contains(where: { $0.state == .queued }) {
                // A round claims from queued/ as it goes: with the round
                // lock held, what is deleted is never also being sent.
                roundLock = try waitForRounds(session.spool, invocation)
                resolved = try selection.choose(
                    in: session.spool, allowed: action.states, picking: action.pickStates, session: session)
            }
            let moves = ManualMoves(session: session)
            var done: ManualMoves.Report
            switch action {
            case .ack: done = try moves.acknowledge(resolved.items)
            case .resend: done = try moves.resend(resolved.items)
            case .delete: done = try moves.delete(resolved.items)
            }
            done.refused = resolved.refused + done.refused
            report = done
        } catch {
            throw .operation(error)
        }
        withExtendedLifetime(roundLock) {}
        if json {
            print(report, skipped: resolved.skipped, action: action, invocation.output)
        } else {
            describe(report, action, invocation.output)
            describe(skipped: resolved.skipped, invocation.output)
            if report.moved.isEmpty && report.refused.isEmpty {
                invocation.output.error("\(action.rawValue): nothing matched \(describe(selection, action))")
            }
        }
        if !report.refused.isEmpty { throw .reported(.dataError) }
    }

    /// The spool's round lock, taken at once or after the running round
    /// (every worker's, on a shared spool), saying so while it waits.
    static func waitForRounds(_ spool: Spool, _ invocation: Invocation) throws(OperationError) -> RoundLock? {
        do {
            if let lock = try spool.lockRound(wait: false) { return lock }
            invocation.output.error("waiting for the round that holds \(spool.path) to finish")
            return try spool.lockRound(wait: true)
        } catch {
            throw .spool(error)
        }
    }

    /// `--subscriber alpha --older-than 1h in needsAttention/ and failed/`:
    /// what a pick that found nothing looked for.
    static func describe(_ selection: ItemSelection, _ action: Action) -> String {
        if selection.namesGiven { return "(no names given)" }
        var words: [String] = []
        if let subscriber = selection.subscriber { words.append("--subscriber \(subscriber)") }
        if let olderThan = selection.olderThan { words.append("--older-than \(Units.describe(olderThan))") }
        let states = selection.states.map { Array($0) } ?? action.pickStates
        let folders = action.states.filter(states.contains).map { "\($0.rawValue)/" }
        return (words + ["in " + folders.joined(separator: " and ")]).joined(separator: " ")
    }

    /// The flagged files a pick passed over: no subscriber's, so only a
    /// person naming them acts on them.
    static func describe(skipped: [SpoolItem], _ output: Output) {
        guard !skipped.isEmpty else { return }
        let shown = skipped.prefix(3).map { "\($0.state.rawValue)/\(PrintableText.of($0.name))" }
            .joined(separator: ", ")
        let count = skipped.count == 1 ? "1 invalid file" : "\(skipped.count) invalid files"
        output.error(
            "skipped \(count) (\(shown)\(skipped.count > 3 ? ", …" : "")): name them to act on them "
                + "(`courier why NAME` says what is wrong)")
    }

    static func selection(_ options: Options, _ operands: Operands, action: Action) throws(CLIError) -> ItemSelection {
        var selection = ItemSelection()
        for name in operands.words {
            selection.namesGiven = true
            if name == "-" {
                let input = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                selection.names += input.split(whereSeparator: \.isNewline).map { String($0).trimmingSpaces }
                    .filter { !$0.isEmpty }
            } else {
                selection.names.append(name)
            }
        }
        selection.all = options.all
        selection.subscriber = options.subscriber
        if let state = options.state { selection.states = [state] }
        selection.olderThan = options.olderThan
        if selection.isEmpty {
            throw .usage("\(action.rawValue): name entries, `-` for standard input, or pick with --all or a filter")
        }
        if selection.all && selection.namesGiven { throw .usage("--all picks every item: give it no names") }
        return selection
    }

    static func describe(_ report: ManualMoves.Report, _ action: Action, _ output: Output) {
        for (item, target) in report.moved {
            let place = target.map { "\($0.rawValue)/" } ?? "deleted"
            output.line("\(item.state.rawValue)/\(PrintableText.of(item.name)) -> \(place)")
        }
        for refusal in report.refused {
            output.error("not moved: \(PrintableText.of(refusal.name)): \(PrintableText.of(refusal.reason))")
        }
        if !report.refused.isEmpty {
            output.error(
                "\(action.rawValue): \(report.moved.count) moved, \(report.refused.count) not (see above)")
        }
        output.line("\(action.done): \(report.moved.count)")
    }

    /// `{"moved":[{"entry","from","to"}],"notMoved":[{"entry","reason"}],
    /// "skipped":[{"entry","state"}]}`; `to` is null for a deletion.
    static func print(_ report: ManualMoves.Report, skipped: [SpoolItem], action: Action, _ output: Output) {
        output.json(
            MovesJSON(
                action: action.rawValue,
                moved: report.moved.map { item, target in
                    .init(entry: item.name.description, from: item.state.rawValue, to: target?.rawValue)
                },
                notMoved: report.refused.map { .init(entry: $0.name, reason: $0.reason) },
                skipped: skipped.map { .init(entry: $0.name.description, state: $0.state.rawValue) }))
    }
}
