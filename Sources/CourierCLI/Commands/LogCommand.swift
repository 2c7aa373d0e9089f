import CourierOperations
import CourierPosix
import CourierSpool
import Foundation

/// `courier log [--since DATE] [--until DATE] [--subscriber NAME] [--event EVENT] [--json]`
enum LogCommand {
    static let command = Command(
        "log", summary: "ledger lines, oldest first",
        usage: "[--since DATE] [--until DATE] [--subscriber NAME] [--event EVENT] [--json]",
        options: [
            .value("--since", "DATE", "from this day (YYYY-MM-DD) or RFC 3339 time"),
            .value("--until", "DATE", "before this time; a bare date means that day's 00:00"),
            .value("--subscriber", "NAME", "this subscriber's (or catalog's) lines only"),
            .value(
                "--event", "EVENT", "lines of this event only", completion: .words(LedgerEvent.allCases.map(\.rawValue))
            ),
            .flag("--json", "one JSON object per line"),
        ],
        example: "courier log --since 2026-11-30 --event needsAttention",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        let json = arguments.flag("--json")
        var filter = History.Filter()
        if let since = try arguments.option("--since") {
            guard let time = Timestamp(dateOrTime: since) else {
                throw .usage("--since \(since) is not YYYY-MM-DD or RFC 3339")
            }
            filter.since = time
        }
        if let until = try arguments.option("--until") {
            guard let time = Timestamp(dateOrTime: until) else {
                throw .usage("--until \(until) is not YYYY-MM-DD or RFC 3339")
            }
            filter.until = time
        }
        filter.subscriber = try arguments.option("--subscriber")
        if let event = try arguments.option("--event") {
            guard let parsed = LedgerEvent(rawValue: event) else {
                throw .usage(
                    "\(event) is not an event (\(LedgerEvent.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            filter.event = parsed
        }
        try arguments.noPositionals("log")
        let spool = try invocation.openSpool()
        let lines: [LedgerLine]
        do { lines = try History(spool: spool).lines(filter) } catch { throw .spool(error) }
        if json {
            for line in lines {
                let object: [String: Any] = [
                    "time": line.time.rfc3339, "round": line.round, "subscriber": line.subscriber, "key": line.key,
                    "event": line.event.rawValue, "status": line.status, "attempt": line.attempt,
                    "durationMs": line.durationMilliseconds, "detail": line.detail,
                ]
                guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
                    continue
                }
                invocation.output.line(String(decoding: data, as: UTF8.self))
            }
            return
        }
        invocation.output.table(lines.map(row))
    }

    static func row(_ line: LedgerLine) -> [String] {
        [
            line.time.rfc3339, line.round, line.subscriber, line.key, line.event.rawValue, String(line.status),
            String(line.attempt), String(line.durationMilliseconds), LedgerLine.escape(line.detail),
        ]
    }
}
