import CourierCatalog
import CourierConfig
import CourierOperations
import CourierRound
import CourierSpool
import CourierSupport
import Foundation

/// `courier status [--ages] [--json|--output FORMAT]`: counts per state, needsAttention
/// first, the last round, the next one; with `--ages`, the queue's shape.
enum StatusCommand {
    static let command = Command(
        "status", summary: "counts per state, needsAttention first; the last and next round",
        usage: "[--ages] [--json|--output FORMAT]",
        details: """
            Up to 20 names that need attention, a round running now (worker, pid, how far),
            courier.timer's next run, notifier health,
            batch and catalog figures. A configuration that cannot be read is said, the
            spool is still shown, and status exits 78. --ages adds, per subscriber and state (sent/ aside), how many
            items are younger than 5 minutes, an hour, a day, or older, by file mtime.
            """,
        options: Options.fields,
        example: "courier status --spool /var/spool/courier",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var ages = false
        var output = OutputForm()

        static let fields: [OptionField<Options>] =
            [.flag("--ages", "also count items per subscriber and state by age: <5m, <1h, <1d, older", \.ages)]
            + OptionField.json("one JSON object", \.output)
    }

    /// What status shows, gathered once for either form.
    struct Report {
        let spool: String
        let counts: [SpoolState: Int]
        /// The first 20 names in needsAttention/, sorted.
        let attention: [String]
        let last: RoundSummary?
        let next: String?
        let notifier: NotifierHealth?
        let notifierText: String
        let catalogs: [(Catalog, CatalogState)]
        /// Why the configuration could not be read; status still shows the spool.
        let configurationProblem: String?
        /// Static tokens (JWTs in `token-file`s) that expire within a week, or have.
        var tokenWarnings: [String] = []
        let holds: [Hold]
        let deferred: DeferredEntries
        /// A shared spool's workers, live or dead, with their claims.
        var workers: [WorkerState] = []
        /// Rounds running now (a second or more), and files killed ones left.
        var running: [RoundProgress.Sighting] = []
    }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        let json = options.output.isJSON
        let ages = options.ages
        try operands.none(for: "status")
        let report = try gather(invocation)
        var shape: QueueShape?
        if ages {
            let spool = try invocation.readSpool()
            do { shape = try QueueShape.measure(spool, now: .now()) } catch { throw .spool(error) }
        }
        if json {
            try printJSON(report, invocation.output, ages: shape)
        } else {
            printText(report, invocation.output)
            if let shape { printAges(shape, invocation.output) }
        }
        // Shown with the spool, and still a failure: the next round would
        // refuse this configuration, and a script must hear of it.
        if report.configurationProblem != nil { throw .reported(.config) }
    }

    static func gather(_ invocation: Invocation) throws(CLIError) -> Report {
        let spool = try invocation.readSpool()
        let counts: [SpoolState: Int]
        do { counts = try spool.counts() } catch { throw .spool(error) }
        var attention: [String] = []
        do {
            try spool.forEachItem(in: .needsAttention) { item in
                if attention.count < 20 { attention.append(item.name.description) }
            }
        } catch {
            throw .spool(error)
        }
        var configuration: Configuration?
        var problem: String?
        // A spool given with --spool and no configuration at all is fine; a
        // configuration that exists but is broken is said, and the spool
        // is still shown.
        do { configuration = try invocation.configurationIfAny(readingSecrets: false) } catch {
            problem = error.message ?? "the configuration cannot be read"
        }
        let notifier = Notifier.health(in: spool)
        let holds: [Hold]
        let deferred: DeferredEntries
        do {
            holds = try spool.holds()
            deferred = try DeferredEntries.survey(
                spool, of: configuration.map { RetrySchedules($0).scheduled })
        } catch {
            throw .spool(error)
        }
        var catalogs: [(Catalog, CatalogState)] = []
        for catalog in configuration?.catalogs ?? [] {
            do { catalogs.append((catalog, try CatalogState.load(catalog.name, in: spool))) } catch {
                throw .spool(error)
            }
        }
        var report = Report(
            spool: spool.path, counts: counts, attention: attention.sorted(), last: Round.lastSummary(in: spool),
            next: Schedule.nextBackgroundRound(), notifier: notifier,
            notifierText: describe(notifier, configuration: configuration),
            catalogs: catalogs,
            configurationProblem: problem, holds: holds, deferred: deferred)
        report.tokenWarnings = configuration?.tokenExpiryWarnings().map(\.description) ?? []
        do { report.workers = try spool.workers() } catch { throw .spool(error) }
        report.running = RoundProgress.running(in: spool)
        return report
    }

    static func printJSON(_ report: Report, _ output: Output, ages: QueueShape? = nil) throws(CLIError) {
        output.json(
            StatusJSON(
                spool: report.spool,
                counts: Dictionary(
                    uniqueKeysWithValues: SpoolState.allCases.map { ($0.rawValue, report.counts[$0] ?? 0) }),
                needsAttention: report.attention, nextRound: report.next, notifications: report.notifierText,
                notificationsWorking: report.notifier?.working, configurationProblem: report.configurationProblem,
                tokenWarnings: report.tokenWarnings,
                held: report.holds.map {
                    .init(subscriber: $0.subscriber.value, since: $0.since.rfc3339, reason: $0.reason)
                },
                workers: report.workers.map { .init(worker: $0.worker.value, alive: $0.alive, claims: $0.claims) },
                deferred: .init(
                    count: report.deferred.count, due: report.deferred.due, nextAttempt: report.deferred.next?.rfc3339),
                batches: (report.last?.batches ?? [:]).mapValues { tally in
                    .init(
                        batchSize: tally.finalSize, batches: tally.batches, items: tally.items,
                        conflicts: tally.conflicts, conflictRate: tally.conflictRate)
                },
                catalogs: Dictionary(
                    uniqueKeysWithValues: report.catalogs.map { catalog, state in
                        (catalog.name.value, CatalogJSON(catalog, state))
                    }),
                ages: ages.map(agesObject),
                running: report.running.map { .init(progress: $0.progress, alive: $0.alive) },
                lastRound: report.last))
    }

    static func printText(_ report: Report, _ output: Output) {
        output.line("spool \(report.spool)")
        if let problem = report.configurationProblem { output.line("configuration: \(problem)") }
        output.table(SpoolState.attentionFirst.map { [$0.rawValue, String(report.counts[$0] ?? 0)] })
        if !report.attention.isEmpty {
            output.line()
            let more = (report.counts[.needsAttention] ?? 0) - report.attention.count
            output.line(
                "needs attention (`courier why ENTRY` explains, `resend` or `ack` settles, "
                    + "`send-now --attention` sends the transient failures again):")
            for name in report.attention { output.line("  \(name)") }
            if more > 0 { output.line("  … and \(more) more: courier list needsAttention") }
        }
        if !report.workers.isEmpty {
            output.line()
            output.line("workers (a shared spool; each claims into sending/WORKER/):")
            output.table(
                report.workers.map {
                    ["  \($0.worker)", $0.alive ? "running a round" : "idle or gone", "\($0.claims) claimed"]
                })
        }
        if !report.holds.isEmpty {
            output.line()
            output.line("held (rounds send them nothing; `courier release NAME` ends it):")
            for hold in report.holds {
                output.line(
                    "  \(hold.subscriber) since \(hold.since.rfc3339)" + (hold.reason.isEmpty ? "" : ": \(hold.reason)")
                )
            }
        }
        if report.deferred.count > 0 {
            output.line()
            output.line(describe(report.deferred))
        }
        output.line()
        for sighting in report.running { output.line(describe(sighting)) }
        if let last = report.last {
            output.line(
                "last round: \(last.round) \(last.mode.rawValue), finished \(last.finished): \(RunCommand.tally(last))")
            for (name, error) in (last.tokenErrors ?? [:]).sorted(by: { $0.key < $1.key }) {
                // The token endpoint's own words (error_description).
                output.line("  subscriber \(name) got no token: \(PrintableText.of(error))")
            }
        } else {
            output.line("last round: none yet")
        }
        output.line(
            report.next.map { "next background round: \($0) (courier.timer)" }
                ?? "next background round: none scheduled (no active courier.timer)")
        output.line("`courier send-now` sends what is queued at once (held subscribers aside).")
        output.line("notifications: \(report.notifierText)")
        for (name, tally) in (report.last?.batches ?? [:]).sorted(by: { $0.key < $1.key }) {
            output.line(
                "batches to \(name): size \(tally.finalSize), \(tally.batches) batches, \(tally.items) items, "
                    + "\(tally.conflicts) conflicts in the last round")
        }
        for (catalog, state) in report.catalogs {
            let synced =
                state.lastSuccess.map { "synced \($0) in \(state.lastDurationMilliseconds ?? 0) ms" } ?? "never synced"
            output.line(
                "catalog \(catalog.name): since \(state.since?.description ?? "-"), \(synced)"
                    + (state.failures > 0 ? ", \(state.failures) failures in a row" : ""))
        }
        for warning in report.tokenWarnings { output.line("warning: \(warning)") }
    }

    /// `status --ages`: one row per subscriber and state, a column per
    /// bucket; a header on a terminal only, as every table.
    static func printAges(_ shape: QueueShape, _ output: Output) {
        output.line()
        output.line("ages, from each file's mtime (for an entry, when intake took it):")
        var rows = shape.rows.map { row in
            [row.subscriber, row.state.rawValue, String(row.total)] + row.counts.map(String.init)
        }
        if output.isTerminal {
            guard !rows.isEmpty else { return output.line("  nothing waits") }
            rows.insert(["SUBSCRIBER", "STATE", "TOTAL"] + QueueShape.buckets.map(\.label), at: 0)
        }
        output.table(rows)
    }

    /// `{"alpha": {"queued": {"total": 3, "under5m": 1, …}}}`
    static func agesObject(_ shape: QueueShape) -> [String: [String: [String: Int]]] {
        var object: [String: [String: [String: Int]]] = [:]
        for row in shape.rows {
            var counts = ["total": row.total]
            for (bucket, count) in zip(QueueShape.buckets, row.counts) { counts[bucket.key] = count }
            object[row.subscriber, default: [:]][row.state.rawValue] = counts
        }
        return object
    }

    /// `deferred: 12 in queued/ after transient failures, 3 due (the next round tries them), next attempt …`
    static func describe(_ deferred: DeferredEntries) -> String {
        var text = "deferred: \(deferred.count) in queued/ after transient failures (retry-schedule)"
        if deferred.due > 0 { text += ", \(deferred.due) due (the next round tries them)" }
        if let next = deferred.next { text += ", next attempt \(next.rfc3339)" }
        return text + "; `courier send-now` tries them now"
    }

    /// `round running: R (foreground, pid 4242 on host-a) since T: 120 sent, …`,
    /// or what a killed round left.
    static func describe(_ sighting: RoundProgress.Sighting) -> String {
        let round = sighting.progress
        let who =
            "\(round.mode.rawValue), pid \(round.pid) on \(round.host)" + (round.worker.map { ", worker \($0)" } ?? "")
        guard sighting.alive else {
            return "round \(round.round) (\(who)) is gone, killed after \(round.sent) sent; its next round "
                + "recovers what it had in sending/"
        }
        return "round running: \(round.round) (\(who)) since \(round.started): "
            + ProgressLine.parts(round).joined(separator: ", ")
            + " (as of \(round.updated))"
    }

    /// The notifier as it is: configured or not, working or not, and since when.
    static func describe(_ health: NotifierHealth?, configuration: Configuration?) -> String {
        if let configuration {
            if configuration.notify == .off { return "off (notify = off)" }
            if configuration.notifyCommand == nil { return "none configured (no notify-command)" }
        }
        guard let health else { return "configured, not run yet" }
        return health.working
            ? "working (last ran \(health.time) after round \(health.round))"
            : "not working — \(PrintableText.of(health.detail)) (at \(health.time), round \(health.round))"
    }
}
