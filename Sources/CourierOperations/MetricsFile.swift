import CourierCatalog
import CourierPosix
import CourierRound
import CourierSpool
import Foundation
import Glibc

/// A Prometheus text-format file for node_exporter's textfile collector,
/// replaced atomically after each round (`metrics-file`).
public struct MetricsFile {
    let path: String
    let spool: Spool
    let catalogs: [SubscriberName]

    public init(path: String, spool: Spool, catalogs: [SubscriberName] = []) {
        self.path = path
        self.spool = spool
        self.catalogs = catalogs
    }

    /// The exposition text: items per state, today's events per subscriber
    /// and event, the last round's time, duration, exit status and tallies,
    /// and each catalog's position.
    public func render(summary: RoundSummary?, exitStatus: Int32, now: Timestamp = .now()) throws(SpoolError) -> String
    {
        var text = Exposition()
        let counts = try spool.counts()
        text.family(
            "courier_items", "Items in each state folder of the spool.",
            SpoolState.allCases.map { (#"{state="\#($0.rawValue)"}"#, String(counts[$0] ?? 0)) })
        var events: [String: Int] = [:]
        _ = try Ledger.read(from: spool.ledgerDirectory, sinceDay: now.utcDay, untilDay: now.utcDay) { line in
            events[#"{subscriber="\#(Self.label(line.subscriber))",event="\#(line.event.rawValue)"}"#, default: 0] += 1
        }
        text.family(
            "courier_events_today", "Ledger events since the start of the UTC day, per subscriber and event.",
            events.keys.sorted().map { ($0, String(events[$0] ?? 0)) })
        Self.lastRound(summary, exitStatus: exitStatus, now: now, into: &text)
        var states: [(SubscriberName, CatalogState)] = []
        for catalog in catalogs { states.append((catalog, try CatalogState.load(catalog, in: spool))) }
        Self.catalogs(states, into: &text)
        return text.text
    }

    /// Prometheus text: one family at a time, HELP and TYPE first.
    struct Exposition {
        private(set) var text = ""

        mutating func family(_ name: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
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
            "courier_batch_size", "The batch size in force at the end of the last round (halved after timeouts).",
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
        let text = try render(summary: summary, exitStatus: exitStatus)
        let slash = path.lastIndex(of: "/")
        let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = FileName(slash.map { String(path[path.index(after: $0)...]) } ?? path)
        let staged = FileName("\(name).\(getpid()).tmp")
        do throws(SystemError) {
            let directory = try DirectoryHandle.open(path: parent)
            // Only a leftover of this PID's earlier life can hold the name.
            try directory.remove(staged)
            try directory.writeAtomically(
                Array(text.utf8), as: name, in: directory, staged: staged, mode: 0o644, faults: spool.faults)
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
