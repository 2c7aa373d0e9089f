import CourierConfig
import CourierOperations
import CourierPosix
import CourierSpool
import CourierSupport
import Foundation
import Glibc

/// `courier log`: the ledger's lines, as journalctl shows the journal's.
enum LogCommand {
    static let command = Command(
        "log", summary: "ledger lines, oldest first; today's unless told otherwise",
        usage:
            "[--since TIME] [--until TIME] [-n|--lines N] [-f|--follow] [--subscriber NAME] [--key KEY] [--event EVENT] [--json|--output FORMAT]",
        details: """
            TIME is today, yesterday, tomorrow, now, -30m, -1h, -2d, YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS],
            @EPOCH or RFC 3339; a day or a time without a zone is UTC, as the ledger is. Without
            --since the lines are today's; with --until or --key (not --follow) they start at the
            ledger's first day. --until is exclusive. --follow prints the last 10 lines (or -n N)
            and then each new line as it is written, past midnight too, until interrupted.
            """,
        options: Options.fields,
        example: "courier log --since -1h --event needsAttention",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var since: TimeExpression?
        var until: TimeExpression?
        var lines: Int?
        var follow = false
        /// A name, a catalog's, `-` for files and routes, or one the
        /// configuration no longer has: checked against all of them.
        var subscriber: String?
        var key: String?
        var event: LedgerEvent?
        var output = OutputForm()

        static let fields: [OptionField<Options>] =
            [
                .value("--since", "TIME", "from this time on (default: today, 00:00 UTC)", \.since),
                .value("--until", "TIME", "before this time", \.until),
                .value(
                    "--lines", short: "-n", "N", "only the last N matching lines", \.lines,
                    expected: "not a number of lines", read: LogCommand.lineCount),
                .flag("--follow", short: "-f", "then print new lines as they are written", \.follow),
                .value(
                    "--subscriber", "NAME", "this subscriber's (or catalog's) lines only; - for files and routes",
                    \.subscriber, completion: .listed([.subscribers, .catalogs])),
                .value("--key", "KEY", "this key's lines only (exactly: ID, or ID#N for a copy)", \.key),
                .value(
                    "--event", "EVENT", "lines of this event only", \.event,
                    completion: .words(LedgerEvent.allCases.map(\.rawValue))),
            ] + OptionField.json("one JSON object per line", \.output)
    }

    /// How long a follow sleeps between looks: new lines show within a
    /// blink, and an idle follow costs four reads of a directory a second.
    static let followInterval = Duration.milliseconds(250)

    /// The lines `--follow` shows before the new ones, as `journalctl -f`.
    static let followLines = 10

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        let json = options.output.isJSON
        let follow = options.follow
        let now = Timestamp.now()
        var filter = History.Filter()
        filter.until = options.until?.resolved(now: now)
        filter.key = options.key
        filter.since =
            options.since?.resolved(now: now)
            ?? LogQuery.defaultSince(until: filter.until, key: filter.key, following: follow, now: now)
        filter.event = options.event
        var last = options.lines
        try operands.none(for: "log")
        if follow {
            if filter.until != nil { throw .usage("--follow shows lines yet to be written: it takes no --until") }
            // journalctl -f: the last 10 lines, unless a start was asked for.
            if last == nil, options.since == nil { last = followLines }
        }
        let spool = try invocation.readSpool()
        if let subscriber = options.subscriber {
            try check(subscriber: subscriber, spool: spool, invocation)
            filter.subscriber = subscriber
        }
        var table = TableWriter(invocation.output)
        let show = { (line: LedgerLine) in
            if !json {
                table.add(row(line))
            } else if let text = jsonLine(line) {
                invocation.output.line(text)
            }
        }
        guard follow else {
            do { try History(spool: spool).run(LogQuery(filter: filter, last: last), show) } catch {
                throw .spool(error)
            }
            table.flush()
            return
        }
        endableBySignals()
        var follower = LedgerFollower(spool: spool, filter: filter)
        var first = LastLines(last ?? 0)
        do { try follower.poll { line in last == nil ? show(line) : first.append(line) } } catch {
            throw .spool(error)
        }
        first.lines.forEach(show)
        // Until SIGINT or SIGTERM (whose default action ends the process),
        // or until the reader of a pipe is gone.
        while table.flush() {
            MonotonicInstant.sleep(until: MonotonicInstant.now() + followInterval)
            do { try follower.poll(show) } catch { throw .spool(error) }
        }
    }

    /// A follow ends by the default action of SIGINT, SIGTERM, SIGHUP or
    /// SIGPIPE, but a parent may hand down a mask that blocks them (the
    /// test runner's threads do): unblocked here, or a follow started by
    /// such a parent could only be killed.
    static func endableBySignals() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    /// `-n N`: a count of lines, 0 and up.
    @Sendable static func lineCount(_ text: String) -> Int? {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(text)
    }

    /// A subscriber `log` knows of: configured, a catalog, `-` (files and
    /// routes), or one removed from the configuration that the ledger still
    /// names (with a warning). Anything else is a typo, said at once
    /// rather than answered with nothing.
    static func check(subscriber: String, spool: Spool, _ invocation: Invocation) throws(CLIError) {
        guard subscriber != "-" else { return }
        // No configuration at all (--spool alone) leaves the ledger's names;
        // a broken one is an error (exit 78), not an empty list of names.
        let configuration = try invocation.configurationIfAny(readingSecrets: false)
        let subscribers = configuration?.subscribers.map(\.name.value) ?? []
        let catalogs = configuration?.catalogs.map(\.name.value) ?? []
        if subscribers.contains(subscriber) || catalogs.contains(subscriber) { return }
        let mentioned: Bool
        do { mentioned = try History(spool: spool).mentions(subscriber: subscriber) } catch { throw .spool(error) }
        if mentioned {
            invocation.output.error("warning: \(subscriber) is not in the configuration; showing its ledger lines")
            return
        }
        var known = "configured: " + (subscribers.isEmpty ? "none" : subscribers.joined(separator: ", "))
        if !catalogs.isEmpty { known += "; catalogs: " + catalogs.joined(separator: ", ") }
        throw .usage("--subscriber \(subscriber): no such subscriber, in the configuration or the ledger (\(known))")
    }

    static func jsonLine(_ line: LedgerLine) -> String? { Output.jsonText(LedgerLineJSON(line)) }

    static func row(_ line: LedgerLine) -> [String] {
        [
            line.time.rfc3339, line.round, line.subscriber, line.key, line.event.rawValue, String(line.status),
            String(line.attempt), String(line.durationMilliseconds), LedgerLine.escape(line.detail),
        ]
    }
}
