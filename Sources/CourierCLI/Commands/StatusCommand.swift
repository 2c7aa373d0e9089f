import CourierCatalog
import CourierConfig
import CourierOperations
import CourierRound
import CourierSpool
import Foundation

/// `courier status [--json]`: counts per state, needsAttention first, the
/// last round, the next one.
enum StatusCommand {
    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        let json = arguments.flag("--json")
        try arguments.noPositionals("status")
        let spool = try invocation.openSpool()
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
        attention.sort()
        let last = Round.lastSummary(in: spool)
        let next = Schedule.nextBackgroundRound()
        let notifier = Notifier.health(in: spool)
        // Status works on a spool given with --spool and no configuration
        // at all; a configuration that exists but is broken is an error.
        let configuration = try invocation.configurationIfAny(readingSecrets: false)
        let notifierText = Self.describe(notifier, configuration: configuration)
        var catalogs: [(SubscriberName, CatalogState)] = []
        for catalog in configuration?.catalogs ?? [] {
            do { catalogs.append((catalog.name, try CatalogState.load(catalog.name, in: spool))) } catch {
                throw .spool(error)
            }
        }

        if json {
            var object: [String: Any] = [
                "spool": spool.path,
                "counts": Dictionary(uniqueKeysWithValues: SpoolState.allCases.map { ($0.rawValue, counts[$0] ?? 0) }),
                "needsAttention": attention,
                "nextRound": next ?? NSNull(),
                "notifications": notifierText,
                "notificationsWorking": notifier?.working ?? NSNull(),
                "batches": Dictionary(
                    uniqueKeysWithValues: (last?.batches ?? [:]).map { name, tally in
                        (
                            name,
                            [
                                "batchSize": tally.finalSize, "batches": tally.batches, "items": tally.items,
                                "conflicts": tally.conflicts, "conflictRate": tally.conflictRate,
                            ] as [String: Any]
                        )
                    }),
                "catalogs": Dictionary(
                    uniqueKeysWithValues: catalogs.map { name, state in
                        (
                            name.value,
                            [
                                "version": state.since ?? NSNull(), "lastSuccess": state.lastSuccess ?? NSNull(),
                                "syncDurationMs": state.lastDurationMilliseconds ?? NSNull(),
                                "failures": state.failures,
                            ] as [String: Any]
                        )
                    }),
            ]
            if let last, let data = try? JSONEncoder().encode(last),
                let decoded = try? JSONSerialization.jsonObject(with: data)
            {
                object["lastRound"] = decoded
            } else {
                object["lastRound"] = NSNull()
            }
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
                throw .io("unable to encode the status as JSON")
            }
            invocation.output.line(String(decoding: data, as: UTF8.self))
            return
        }

        let output = invocation.output
        output.line("spool \(spool.path)")
        output.table(SpoolState.attentionFirst.map { [$0.rawValue, String(counts[$0] ?? 0)] })
        if !attention.isEmpty {
            output.line()
            let more = (counts[.needsAttention] ?? 0) - attention.count
            output.line("needs attention (`courier why ENTRY` explains, `resend` or `ack` settles):")
            for name in attention { output.line("  \(name)") }
            if more > 0 { output.line("  … and \(more) more: courier list needsAttention") }
        }
        output.line()
        if let last {
            output.line(
                "last round: \(last.round) \(last.mode.rawValue), finished \(last.finished): \(RunCommand.tally(last))")
        } else {
            output.line("last round: none yet")
        }
        if let next {
            output.line("next background round: \(next) (courier.timer)")
        } else {
            output.line("next background round: none scheduled (no active courier.timer)")
        }
        output.line("`courier send-now` sends at once.")
        output.line("notifications: \(notifierText)")
        for (name, tally) in (last?.batches ?? [:]).sorted(by: { $0.key < $1.key }) {
            output.line(
                "batches to \(name): size \(tally.finalSize), \(tally.batches) batches, \(tally.items) items, "
                    + "\(tally.conflicts) conflicts in the last round")
        }
        for (name, state) in catalogs {
            let synced =
                state.lastSuccess.map { "synced \($0) in \(state.lastDurationMilliseconds ?? 0) ms" } ?? "never synced"
            output.line(
                "catalog \(name): version \(state.since.map(String.init) ?? "-"), \(synced)"
                    + (state.failures > 0 ? ", \(state.failures) failures in a row" : ""))
        }
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
            : "not working — \(health.detail) (at \(health.time), round \(health.round))"
    }
}
