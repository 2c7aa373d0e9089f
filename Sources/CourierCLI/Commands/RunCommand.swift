import CourierConfig
import CourierOperations
import CourierPosix
import CourierRound
import CourierSpool

/// `courier run [--background|--foreground] [--wait]` and `courier send-now [--attention]`.
enum RunCommand {
    static let command = Command(
        "run", summary: "one round: recover, intake, routes, deliver, summary, notify",
        usage: "[--background|--foreground] [--wait]",
        details: """
            A background round (the default, what systemd runs) tries each item once; a
            foreground round retries with backoff. When another round holds the spool, run
            exits 0 at once and says so.
            """,
        options: RunOptions.fields,
        example: "courier run --foreground",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct RunOptions: CommandOptions {
        var background = false
        var foreground = false
        var wait = false

        static let fields: [OptionField<RunOptions>] = [
            .flag("--background", "one attempt per item, then needsAttention/ (the default)", \.background),
            .flag("--foreground", "retry with backoff, and wait for a round that holds the spool", \.foreground),
            .flag("--wait", "wait for a round that holds the spool instead of exiting 0", \.wait),
        ]
    }

    struct SendNowOptions: CommandOptions {
        var attention = false

        static let fields: [OptionField<SendNowOptions>] = [
            .flag(
                "--attention", "first take every transient failure in needsAttention/ back to queued/ and send it",
                \.attention)
        ]
    }

    static let sendNowCommand = Command(
        "send-now", summary: "a foreground round: retries with backoff, waits for the spool",
        usage: "[ENTRY...] [--attention]",
        details: """
            Deferred entries are sent whether due or not; held subscribers get nothing. With
            ENTRY names (postqueue -i), the round sends only those entries of queued/ and leaves
            every other there for the next round; each named entry's state is printed after.
            """,
        options: SendNowOptions.fields,
        operands: .entries([.queued]),
        example: "courier send-now --attention",
        run: { options, operands, invocation throws(CLIError) in try sendNow(options, operands, invocation) })

    static func run(_ options: RunOptions, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        if options.background && options.foreground {
            throw .usage("run takes --background or --foreground, not both")
        }
        try operands.none(for: "run")
        // A person's foreground round waits for a background one.
        try runRound(
            options.foreground ? .foreground : .background, wait: options.wait || options.foreground,
            attention: false, names: [], invocation)
    }

    /// The manual "dispatch now": a foreground round that waits; with
    /// --attention, transient failures are sent again too.
    static func sendNow(_ options: SendNowOptions, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        if options.attention && !operands.isEmpty {
            throw .usage(
                "send-now --attention takes back every transient failure: name no entries, or `courier resend` them")
        }
        try runRound(.foreground, wait: true, attention: options.attention, names: operands.words, invocation)
    }

    static func runRound(
        _ mode: RoundMode, wait: Bool, attention: Bool, names: [String], _ invocation: Invocation
    ) throws(CLIError) {
        let configuration = try invocation.configuration(readingSecrets: true)
        let session = try invocation.openSession(configuration)
        var chosen: NamedEntries?
        if !names.isEmpty {
            let named = try NamedEntries.resolve(names, in: session.spool)
            for refusal in named.refused { invocation.output.error("not sent: \(refusal.name): \(refusal.reason)") }
            guard !named.entries.isEmpty else { throw .reported(.dataError) }
            chosen = named
        }
        let result: RoundResult
        // A person's round on a terminal shows how far it is; a pipe, the
        // journal and --quiet get the summary line alone.
        let line =
            mode == .foreground && ProgressLine.wanted(journal: invocation.output.journal, quiet: invocation.quiet)
            ? ProgressLine() : nil
        let log = Logging.eventLog(
            quiet: invocation.quiet, verbose: invocation.verbose, journal: invocation.output.journal, above: line)
        defer { line?.clear() }
        do {
            var round = Round(session: session, configuration: configuration, mode: mode, log: log)
            round.retryAttention = attention
            round.chosen = chosen.map { Set($0.entries) }
            round.progress = line.map { line in { line.draw($0) } }
            round.waiting = { [spool = session.spool] in
                let text = waitingText(spool)
                if let line { line.print("courier: " + text + "\n") } else { log(.info, text) }
            }
            result = try round.run(wait: wait)
            line?.clear()
        } catch {
            let failure = CLIError.round(error)
            writeMetrics(configuration, session, summary: nil, status: failure.status, invocation)
            throw failure
        }
        // An OAuth subscriber that got no token was not sent to: the round
        // ran, and says why in the log, but exits 75 so that it is seen.
        let status: ExitStatus
        if case .ran(let summary) = result, summary.tokenErrors != nil { status = .temporary } else { status = .ok }
        if case .ran(let summary) = result {
            writeMetrics(configuration, session, summary: summary, status: status, invocation)
        }
        switch result {
        case .busy:
            // On a shared spool: this worker's own lock, or a round of a
            // configuration without `shared = yes`, which holds the spool.
            let who =
                configuration.worker.map { "worker \($0) (or an unshared round) is already running" }
                ?? "another round is running"
            invocation.output.line("\(who) on \(configuration.spool); nothing to do (use --wait to wait for it)")
        case .ran(let summary):
            if let chosen { try chosen.describe(in: session.spool, invocation.output) }
            invocation.output.line(describe(summary))
        }
        if status != .ok { throw .reported(status) }
        if let chosen, !chosen.refused.isEmpty { throw .reported(.dataError) }
    }

    /// What a round that waits for the lock says: whose round, when it
    /// began, how far it is, when its file says (`RunningRound`).
    static func waitingText(_ spool: Spool) -> String {
        guard let other = RoundProgress.running(in: spool).first(where: \.alive)?.progress else {
            return "waiting for the round that holds \(spool.path) to finish"
        }
        let age = Timestamp(rfc3339: other.started).map { " \(Age.describe(.now() - $0)) in," } ?? ""
        return "waiting for round \(other.round) (pid \(other.pid),\(age) \(other.sent) sent) to finish"
    }

    /// A metrics file that cannot be written is worth a warning, not a
    /// failed round: the items have been delivered.
    private static func writeMetrics(
        _ configuration: Configuration, _ session: SpoolSession, summary: RoundSummary?, status: ExitStatus,
        _ invocation: Invocation
    ) {
        guard let path = configuration.metricsFile else { return }
        do {
            try MetricsFile(path: path, session: session, configuration: configuration)
                .write(summary: summary, exitStatus: status.rawValue)
        } catch {
            invocation.output.error("warning: metrics-file: \(error)")
        }
    }

    static func describe(_ summary: RoundSummary) -> String {
        "round \(summary.round) (\(summary.mode.rawValue), \(summary.durationMilliseconds) ms): " + tally(summary)
    }

    static func tally(_ summary: RoundSummary) -> String {
        var parts = ["\(summary.sent) sent", "\(summary.needsAttention) need attention"]
        if let back = summary.fromAttention { parts.append("\(back) back from needsAttention/") }
        if summary.invalid > 0 { parts.append("\(summary.invalid) invalid") }
        if summary.accepted > 0 { parts.append("\(summary.accepted) accepted") }
        if summary.duplicates > 0 { parts.append("\(summary.duplicates) duplicate") }
        if summary.retries > 0 { parts.append("\(summary.retries) retries") }
        if summary.routesAttached > 0 { parts.append("\(summary.routesAttached) routes attached") }
        if summary.routeTimeouts > 0 { parts.append("\(summary.routeTimeouts) route timeouts") }
        if summary.recovered > 0 { parts.append("\(summary.recovered) recovered") }
        if summary.settling > 0 { parts.append("\(summary.settling) still being written") }
        // One word for one thing: `deferred` is what this round put back
        // to wait (the ledger's event); entries deferred before that it
        // passed over are `not due yet`.
        if let deferred = summary.deferred, deferred > 0 { parts.append("\(deferred) deferred") }
        if let notDue = summary.notDue, notDue > 0 { parts.append("\(notDue) not due yet") }
        for (name, left) in (summary.held ?? [:]).sorted(by: { $0.key < $1.key }) {
            parts.append("\(name) held: \(left) left queued")
        }
        for (name, left) in (summary.notAnswering ?? [:]).sorted(by: { $0.key < $1.key }) {
            parts.append("\(name) not answering: \(left) left queued")
        }
        if let left = summary.notChosen, left > 0 { parts.append("not named: \(left) left queued") }
        return parts.joined(separator: ", ")
    }
}
