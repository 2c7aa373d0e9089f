import CourierOperations
import CourierPosix
import CourierSpool
import Foundation

/// `courier list [STATE] [--json]`: one line per item.
enum ListCommand {
    static let command = Command(
        "list", summary: "one line per item, with its state, key, subscriber, kind and last event",
        usage: "[STATE] [--json]", options: [.flag("--json", "one JSON array")],
        operands: .words(SpoolState.allCases.map(\.rawValue)), example: "courier list needsAttention",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        let json = arguments.flag("--json")
        let rest = try arguments.positionals()
        guard rest.count <= 1 else { throw .usage("list takes at most one STATE") }
        var states = SpoolState.attentionFirst
        if let name = rest.first {
            guard let state = SpoolState(rawValue: name) else {
                throw .usage("\(name) is not a state (\(SpoolState.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            states = [state]
        }
        let spool = try invocation.openSpool()
        let lastEvents: [String: LedgerLine]
        do { lastEvents = try History(spool: spool).lastEvents() } catch { throw .spool(error) }
        let now = Timestamp.now()
        var rows: [[String]] = []
        var objects: [[String: Any]] = []
        for state in states {
            var items: [SpoolItem] = []
            do { try spool.forEachItem(in: state) { items.append($0) } } catch { throw .spool(error) }
            for item in items.sorted(by: { $0.name < $1.name }) {
                let facts = RecordFacts.read(item, in: spool)
                let last = lastEvents[item.ledgerSubscriber + "\t" + item.ledgerKey]
                let age = facts.modified.map { Age.describe(now - $0) } ?? "-"
                let lastText =
                    last.map { $0.status > 0 ? "\($0.event.rawValue) \($0.status)" : $0.event.rawValue } ?? "-"
                rows.append([
                    state.rawValue, item.ledgerKey, item.ledgerSubscriber, facts.kind ?? "-", facts.time ?? "-", age,
                    lastText,
                ])
                objects.append([
                    "state": state.rawValue, "name": item.name.description, "key": item.ledgerKey,
                    "subscriber": item.ledgerSubscriber, "kind": facts.kind ?? NSNull(), "time": facts.time ?? NSNull(),
                    "ageSeconds": facts.modified.map { (now - $0).nanoseconds / 1_000_000_000 } ?? NSNull(),
                    "lastEvent": last?.event.rawValue ?? NSNull(), "lastStatus": last?.status ?? NSNull(),
                ])
            }
        }
        if json {
            guard let data = try? JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys]) else {
                throw .io("unable to encode the list as JSON")
            }
            invocation.output.line(String(decoding: data, as: UTF8.self))
            return
        }
        if invocation.output.isTerminal && !rows.isEmpty {
            rows.insert(["STATE", "KEY", "SUBSCRIBER", "KIND", "TIME", "AGE", "LAST"], at: 0)
        }
        invocation.output.table(rows)
    }
}

/// The few facts `list` shows from inside an item's file.
struct RecordFacts {
    var kind: String?
    var time: String?
    var modified: Timestamp?

    static func read(_ item: SpoolItem, in spool: Spool) -> RecordFacts {
        var facts = RecordFacts()
        facts.modified = try? spool.directory(item.state).status(of: item.name)?.modified
        guard let bytes = try? spool.read(item.name, in: item.state, limit: 1 << 20),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return facts }
        facts.kind = object["kind"] as? String
        facts.time = object["time"] as? String
        return facts
    }
}

/// `42s`, `5m`, `3h`, `2d`: an age at a glance.
enum Age {
    static func describe(_ duration: Duration) -> String {
        let seconds = max(0, duration.nanoseconds / 1_000_000_000)
        if seconds < 120 { return "\(seconds)s" }
        if seconds < 7200 { return "\(seconds / 60)m" }
        if seconds < 172_800 { return "\(seconds / 3600)h" }
        return "\(seconds / 86400)d"
    }
}
