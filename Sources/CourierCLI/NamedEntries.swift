import CourierIdentifiers
import CourierOperations
import CourierSpool

/// The entries `send-now NAME…` names: each must be an entry waiting in
/// `queued/` (deferred or not). Anything else is refused with what to do
/// instead, and the others are still sent.
struct NamedEntries {
    struct Refusal {
        let name: String
        let reason: String
    }

    var entries: [EntryName] = []
    var refused: [Refusal] = []

    static func resolve(_ names: [String], in spool: Spool) throws(CLIError) -> NamedEntries {
        var named = NamedEntries()
        var seen: Set<EntryName> = []
        for name in names {
            let items: [SpoolItem]
            do { items = try spool.resolve(name) } catch {
                if case .spool(let fault) = error { throw .spool(fault) }
                named.refused.append(.init(name: name, reason: error.description))
                continue
            }
            let queued = items.filter { $0.state == .queued }
            let entries = queued.compactMap(\.entry)
            for entry in entries where seen.insert(entry).inserted { named.entries.append(entry) }
            if !entries.isEmpty { continue }
            if !queued.isEmpty {
                named.refused.append(
                    .init(name: name, reason: "is not taken in yet: `courier send-now` takes it in and sends it"))
                continue
            }
            let places = items.map { "\($0.state.rawValue)/\($0.name)" }.joined(separator: ", ")
            let advice =
                items.contains { $0.state == .needsAttention || $0.state == .failed }
                ? "; `courier resend \(name)` puts it back in queued/ first" : ""
            named.refused.append(.init(name: name, reason: "is in \(places), not in queued/\(advice)"))
        }
        return named
    }

    /// Where each named entry is after the round: `sent/`, `queued/` (held,
    /// deferred again), `needsAttention/`.
    func describe(in spool: Spool, _ output: Output) throws(CLIError) {
        for entry in entries {
            let state: SpoolState?
            do { state = try spool.locate(entry.fileName) } catch { throw .spool(error) }
            output.line("queued/\(entry.fileName) -> \(state.map { "\($0.rawValue)/" } ?? "gone")")
        }
    }
}
