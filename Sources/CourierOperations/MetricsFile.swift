import CourierCatalog
import CourierPosix
import CourierRound
import CourierSpool
import CourierTransport
import Foundation
import Glibc

/// A Prometheus text-format file for node_exporter's textfile collector,
/// replaced atomically after each round (`metrics-file`).
public struct MetricsFile {
    let path: String
    /// The file itself is outside the spool; the session keeps the spool's
    /// part (the last exit status, the event counts).
    let session: SpoolSession
    let catalogs: [SubscriberName]
    /// The configured subscribers, for `courier_subscriber_held`.
    let subscribers: [SubscriberName]

    public init(
        path: String, session: SpoolSession, catalogs: [SubscriberName] = [], subscribers: [SubscriberName] = []
    ) {
        self.path = path
        self.session = session
        self.catalogs = catalogs
        self.subscribers = subscribers
    }

    private var spool: Spool { session.spool }

    /// The exposition text: the build, items per state and the oldest item's
    /// age per state, events per subscriber and event since the spool began,
    /// the last round's time, duration, exit status and tallies, and each
    /// catalog's position.
    public func render(summary: RoundSummary?, exitStatus: Int32, now: Timestamp = .now()) throws(SpoolError) -> String
    {
        var text = Exposition()
        text.family(
            "courier_build_info", "The running courier's version (always 1).",
            [(#"{version="\#(Self.label(CourierVersion.current))"}"#, "1")])
        let counts = try spool.counts()
        let intake = IntakeTimes(spool: spool)
        text.family(
            "courier_items", "Items in each state folder of the spool.",
            SpoolState.allCases.map { (#"{state="\#($0.rawValue)"}"#, String(counts[$0] ?? 0)) })
        text.family(
            "courier_oldest_item_age_seconds",
            "Age of the oldest item in each state but sent/, from when it was taken in (0: none).",
            try Self.oldestStates.map { state throws(SpoolError) in
                let oldest = try Self.oldest(in: state, of: spool, intake: intake)
                return (
                    #"{state="\#(state.rawValue)"}"#, String(oldest.map { max(0, (now - $0).milliseconds / 1000) } ?? 0)
                )
            })
        let held = Set(try spool.holds().map(\.subscriber))
        text.family(
            "courier_subscriber_held", "1 while the subscriber is held (.courier/held/NAME), else 0.",
            subscribers.map { (#"{subscriber="\#(Self.label($0.value))"}"#, held.contains($0) ? "1" : "0") })
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
        Self.lastRound(summary, exitStatus: exitStatus, now: now, into: &text)
        var states: [(SubscriberName, CatalogState)] = []
        for catalog in catalogs { states.append((catalog, try CatalogState.load(catalog, in: spool))) }
        Self.catalogs(states, into: &text)
        return text.text
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
        _ summary: RoundSummary?, exitStatus: Int32, now: Timestamp, into text: inout Exposition
    ) {
        let finished = summary.flatMap { Timestamp(rfc3339: $0.finished) } ?? now
        text.family(
            "courier_last_round_timestamp_seconds", "When the last round ended (Unix time).",
            [("", String(Double(finished.nanosecondsSinceEpoch) / 1e9))])
        text.family(
            "courier_last_round_duration_seconds", "How long the last round took.",
            [("", String(Double(summary?.durationMilliseconds ?? 0) / 1000))])
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
            batches.map { (#"{subscriber="\#(label($0.key))"}"#, String($0.value.sentSize)) })
        text.family(
            "courier_batch_size_limit",
            "The batch size in force at the end of the last round (halved by timeouts, grown back by answers).",
            batches.map { (#"{subscriber="\#(label($0.key))"}"#, String($0.value.finalSize)) })
        text.family(
            "courier_batch_conflict_ratio", "Items answered CONFLICT per item sent in batches, last round.",
            batches.map { (#"{subscriber="\#(label($0.key))"}"#, String($0.value.conflictRate)) })
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
            states.map { (#"{catalog="\#($0.0)"}"#, String(Double($0.1.lastDurationMilliseconds ?? 0) / 1000)) })
        text.family(
            "courier_catalog_failures", "Failed syncs in a row per catalog (3: the next one is full).",
            states.map { (#"{catalog="\#($0.0)"}"#, String($0.1.failures)) })
    }

    /// Replaced atomically (`writeAtomically`): staged next to the target
    /// as `NAME.PID.tmp` (0644; the textfile collector reads only `*.prom`),
    /// fsynced, renamed, and the directory fsynced, so the collector never
    /// reads half a file and a power cut leaves the old file or the new one.
    public func write(summary: RoundSummary?, exitStatus: Int32) throws(SpoolError) {
        try session.commit(
            Transition(newFiles: [
                .init(Array("\(exitStatus)\n".utf8), as: FileName(Self.exitStatusFile), in: .control, replacing: true)
            ]))
        try publish(try render(summary: summary, exitStatus: exitStatus))
    }

    /// After a command that is not a round moved items: the same file, with
    /// the last round's figures as that round left them.
    public func refresh() throws(SpoolError) {
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

    /// Every state but `sent/`, where age is only history.
    static let oldestStates: [SpoolState] = SpoolState.allCases.filter { $0 != .sent }

    /// The earliest intake time among a folder's files (`IntakeTimes`): one
    /// status per entry, for folders that are small when things are well.
    static func oldest(in state: SpoolState, of spool: Spool, intake: IntakeTimes) throws(SpoolError) -> Timestamp? {
        var oldest: Timestamp?
        let directory = spool.directory(state)
        do {
            let stream = try directory.entries()
            while let name = try stream.next() {
                guard let status = try directory.status(of: name), status.kind == .regular else { continue }
                let taken = intake.of(SpoolItem(name: name, state: state, entry: EntryName(fileName: name)), status)
                if oldest.map({ taken < $0 }) ?? true { oldest = taken }
            }
        } catch {
            throw SpoolError(error)
        }
        return oldest
    }

    /// Label values escape backslash, quote and newline.
    static func label(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
