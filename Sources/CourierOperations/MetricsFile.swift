import CourierCatalog
import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierRound
import CourierSpool
import CourierTransport
import Foundation
import Glibc

/// A Prometheus text-format file for node_exporter's textfile collector,
/// replaced atomically after each round (`metrics-file`).
package struct MetricsFile {
    let path: String
    /// The file itself is outside the spool; the session keeps the spool's
    /// part (the last exit status, the event counts).
    let session: SpoolSession
    let catalogs: [SubscriberName]
    /// The configured subscribers, for `courier_subscriber_held` and a
    /// sample per subscriber even where it has no items.
    let subscribers: [SubscriberName]
    /// The subscribers with a `retry-schedule`, whose deferred entries count.
    let scheduled: Set<SubscriberName>
    /// Whether a notifier is configured (`notify-command`, not `notify = off`).
    let notifierConfigured: Bool

    package init(
        path: String, session: SpoolSession, catalogs: [SubscriberName] = [], subscribers: [SubscriberName] = [],
        scheduled: Set<SubscriberName> = [], notifierConfigured: Bool = false
    ) {
        self.path = path
        self.session = session
        self.catalogs = catalogs
        self.subscribers = subscribers
        self.scheduled = scheduled
        self.notifierConfigured = notifierConfigured
    }

    private var spool: Spool { session.spool }

    /// The metrics of a spool run by `configuration`.
    package init(path: String, session: SpoolSession, configuration: Configuration) {
        self.init(
            path: path, session: session, catalogs: configuration.catalogs.map(\.name),
            subscribers: configuration.subscribers.map(\.name),
            scheduled: RetrySchedules(configuration).scheduled,
            notifierConfigured: configuration.notifyCommand != nil && configuration.notify != .off)
    }

    /// The exposition text: the build; items per state and subscriber, the
    /// oldest one's age, deferred entries and the next attempt; holds; the
    /// notifier's health; events per subscriber and event since the spool
    /// began; the last round's time, duration, exit status and tallies; and
    /// each catalog's position. `finished` is when the last round ended
    /// (nil: from its summary, none when no round ever finished).
    package func render(
        summary: RoundSummary?, exitStatus: Int32, finished: Timestamp? = nil, now: Timestamp = .now()
    ) throws(SpoolError) -> String {
        var text = Exposition()
        text.family(
            "courier_build_info", "The running courier's version (always 1).",
            [(#"{version="\#(Self.label(CourierVersion.current))"}"#, "1")])
        let census = try SpoolCensus.take(spool, scheduled: scheduled, now: now)
        Self.items(census, subscribers: subscribers, now: now, into: &text)
        Self.deferred(census, scheduled: scheduled, into: &text)
        let held = Set(try spool.holds().map(\.subscriber))
        text.family(
            "courier_subscriber_held", "1 while the subscriber is held (.courier/held/NAME), else 0.",
            subscribers.map { (#"{subscriber="\#(Self.label($0.value))"}"#, held.contains($0) ? "1" : "0") })
        if notifierConfigured {
            // Not run yet is no fault: only a run that failed is.
            let working = Notifier.health(in: spool)?.working ?? true
            text.family(
                "courier_notifier_up",
                "1 while notify-command works (or has not run yet), 0 after a run that failed (.courier/notifier.json).",
                [("", working ? "1" : "0")])
        }
        let events = try EventCounters(session: session).update()
        var samples: [(labels: String, value: String)] = []
        for (subscriber, byEvent) in events.sorted(by: { $0.key < $1.key }) {
            for (event, count) in byEvent.sorted(by: { $0.key < $1.key }) {
                samples.append((#"{subscriber="\#(Self.label(subscriber))",event="\#(event)"}"#, String(count)))
            }
        }
        text.family(
            "courier_events_total", "Ledger events per subscriber and event since the spool began.", samples,
            type: "counter")
        let ended = finished ?? summary.flatMap { Timestamp(rfc3339: $0.finished) }
        Self.lastRound(summary, exitStatus: exitStatus, finished: ended, into: &text)
        var states: [(SubscriberName, CatalogState)] = []
        for catalog in catalogs { states.append((catalog, try CatalogState.load(catalog, in: spool))) }
        Self.catalogs(states, into: &text)
        return text.text
    }

    /// `courier_items` and `courier_oldest_item_age_seconds`, a sample for
    /// every configured subscriber (and `-`) in every state, so that a
    /// backlog appears as a value that grows, never as a series that
    /// appears; subscribers no longer configured show while they have items.
    private static func items(
        _ census: SpoolCensus, subscribers: [SubscriberName], now: Timestamp, into text: inout Exposition
    ) {
        let names = Set(subscribers.map(\.value)).union(census.counts.keys.map(\.subscriber)).union(["-"]).sorted()
        var counts: [(labels: String, value: String)] = []
        var ages: [(labels: String, value: String)] = []
        for state in SpoolState.allCases {
            for name in names {
                let key = SpoolCensus.Key(subscriber: name, state: state)
                let labels = #"{state="\#(state.rawValue)",subscriber="\#(Self.label(name))"}"#
                counts.append((labels, String(census.counts[key] ?? 0)))
                guard state != .sent else { continue }
                let age = census.oldestIntake[key].map { ItemAge.age(sinceIntake: $0, now: now) } ?? .zero
                ages.append((labels, String(age.components.seconds)))
            }
        }
        text.family(
            "courier_items",
            "Items in each state folder per subscriber (-: intake and flagged files); sum by (state) for a folder.",
            counts)
        text.family(
            "courier_oldest_item_age_seconds",
            "Seconds since intake took the oldest item of each subscriber in each state but sent/ (0: none).", ages)
    }

    /// `courier_deferred_items` and `courier_next_attempt_timestamp_seconds`,
    /// for the subscribers with a `retry-schedule`.
    private static func deferred(_ census: SpoolCensus, scheduled: Set<SubscriberName>, into text: inout Exposition) {
        guard !scheduled.isEmpty else { return }
        let names = scheduled.map(\.value).sorted()
        text.family(
            "courier_deferred_items",
            "Entries retry-schedule put back in queued/ to be tried again, due or not, per subscriber.",
            names.map { (#"{subscriber="\#(Self.label($0))"}"#, String(census.deferred[$0]?.count ?? 0)) })
        let next = names.compactMap { name -> (String, String)? in
            guard let due = census.deferred[name]?.next else { return nil }
            return (#"{subscriber="\#(Self.label(name))"}"#, String(due.secondsSinceEpoch))
        }
        if !next.isEmpty {
            text.family(
                "courier_next_attempt_timestamp_seconds",
                "The soonest next attempt of a deferred entry not yet due, per subscriber (Unix time; none: no sample).",
                next)
        }
    }

    /// Prometheus text: one family at a time, HELP and TYPE first.
    struct Exposition {
        private(set) var text = ""

        mutating func family(
            _ name: String, _ help: String, _ samples: [(labels: String, value: String)], type: String = "gauge"
        ) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { text += "\(name)\(sample.labels) \(sample.value)\n" }
        }
    }

    private static func lastRound(
        _ summary: RoundSummary?, exitStatus: Int32, finished: Timestamp?, into text: inout Exposition
    ) {
        text.family(
            "courier_last_round_timestamp_seconds", "When the last round ended (Unix time; 0: no round yet).",
            [("", finished.map(Exposition.seconds) ?? "0")])
        text.family(
            "courier_last_round_duration_seconds", "How long the last round took.",
            [("", Exposition.seconds(milliseconds: Int64(summary?.durationMilliseconds ?? 0)))])
        text.family(
            "courier_last_round_exit_status", "The exit status of the last round (0: it ran).",
            [("", String(exitStatus))])
        guard let summary else { return }
        let outcomes: [(String, Int)] = [
            ("sent", summary.sent), ("needsAttention", summary.needsAttention), ("invalid", summary.invalid),
            ("accepted", summary.accepted), ("retries", summary.retries), ("recovered", summary.recovered),
            ("routeTimeouts", summary.routeTimeouts),
        ]
        text.family(
            "courier_last_round_items", "What the last round did, per outcome.",
            outcomes.map { (#"{outcome="\#($0.0)"}"#, String($0.1)) })
        let batches = summary.batches.sorted { $0.key < $1.key }
        guard !batches.isEmpty else { return }
        text.family(
            "courier_batch_size", "Items per batch POSTed in the last round (the mean of the batches as sent).",
            batches.map { (#"{subscriber="\#(label($0.key))"}"#, Exposition.ratio($0.value.sentSize)) })
        text.family(
            "courier_batch_size_limit",
            "The batch size in force at the end of the last round (halved by timeouts, grown back by answers).",
            batches.map { (#"{subscriber="\#(label($0.key))"}"#, String($0.value.finalSize)) })
        text.family(
            "courier_batch_conflict_ratio", "Items answered CONFLICT per item sent in batches, last round.",
            batches.map { (#"{subscriber="\#(label($0.key))"}"#, Exposition.ratio($0.value.conflictRate)) })
    }

    private static func catalogs(_ states: [(SubscriberName, CatalogState)], into text: inout Exposition) {
        guard !states.isEmpty else { return }
        text.family(
            "courier_catalog_version",
            "The server version each catalog is complete up to (-1: never synced, or the server gives none).",
            states.map { (#"{catalog="\#($0.0)"}"#, String($0.1.completeVersion ?? -1)) })
        let timed = states.compactMap { name, state -> (String, String)? in
            guard case .serverTime(let text)? = state.since, let time = Timestamp(rfc3339: text) else { return nil }
            return (#"{catalog="\#(name)"}"#, String(time.secondsSinceEpoch))
        }
        if !timed.isEmpty {
            text.family(
                "courier_catalog_server_time_seconds",
                "The server time each catalog with since = server-time is complete up to, in seconds since the epoch.",
                timed)
        }
        text.family(
            "courier_catalog_sync_duration_seconds", "How long each catalog's last successful sync took.",
            states.map { name, state in
                (#"{catalog="\#(name)"}"#, Exposition.seconds(milliseconds: state.lastDurationMilliseconds ?? 0))
            })
        text.family(
            "courier_catalog_last_success_timestamp_seconds",
            "When each catalog's last successful sync ended (Unix time; 0: never).",
            states.map { name, state in
                let success = state.lastSuccess.flatMap(Timestamp.init(rfc3339:))
                return (#"{catalog="\#(name)"}"#, success.map(Exposition.seconds) ?? "0")
            })
        text.family(
            "courier_catalog_failures", "Failed syncs in a row per catalog (3: the next one is full).",
            states.map { (#"{catalog="\#($0.0)"}"#, String($0.1.failures)) })
    }

    /// Replaced atomically (`writeAtomically`): staged next to the target
    /// as `NAME.PID.tmp` (0644; the textfile collector reads only `*.prom`),
    /// fsynced, renamed, and the directory fsynced, so the collector never
    /// reads half a file and a power cut leaves the old file or the new one.
    package func write(summary: RoundSummary?, exitStatus: Int32) throws(SpoolError) {
        try session.commit(
            Transition(newFiles: [
                .init(
                    Array("\(exitStatus)\n".utf8), as: FileName(Self.exitStatusFile), in: .control, replacing: true,
                    kind: .report)
            ]))
        // A round that failed before its summary still ended now.
        let finished = summary.flatMap { Timestamp(rfc3339: $0.finished) } ?? .now()
        try publish(try render(summary: summary, exitStatus: exitStatus, finished: finished))
    }

    /// After a command that is not a round moved items: the same file, with
    /// the last round's figures as that round left them.
    package func refresh() throws(SpoolError) {
        let status = spool.readControlFile(Self.exitStatusFile).flatMap {
            Int32(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        try publish(try render(summary: Round.lastSummary(in: spool), exitStatus: status ?? 0))
    }

    /// The last round's exit status, kept for `refresh`.
    static let exitStatusFile = "last-round-status"

    private func publish(_ text: String) throws(SpoolError) {
        let slash = path.lastIndex(of: "/")
        let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = FileName(slash.map { String(path[path.index(after: $0)...]) } ?? path)
        let staged = FileName("\(name).\(getpid()).tmp")
        do throws(SystemError) {
            let directory = try DirectoryHandle.open(path: parent)
            // Only a leftover of this PID's earlier life can hold the name.
            try directory.remove(staged)
            try directory.writeAtomically(
                Array(text.utf8), as: name, in: directory, staged: staged, mode: 0o644, faults: session.faults)
        } catch {
            throw SpoolError(error)
        }
    }

    /// Label values escape backslash, quote and newline.
    static func label(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
