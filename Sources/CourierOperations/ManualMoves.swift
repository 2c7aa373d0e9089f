import CourierPosix
import CourierSpool

/// `ack` and `resend`: the moves a person makes, with a ledger line each.
/// They do exactly what `mv` would, plus the trace.
public struct ManualMoves {
    let spool: Spool

    public init(spool: Spool) { self.spool = spool }

    /// needsAttention/ → failed/ (event `acknowledged`).
    public func acknowledge(_ items: [SpoolItem]) throws(OperationError) {
        try move(
            items, allowed: [.needsAttention], to: .failed, event: .acknowledged, detail: "acknowledged by a person")
    }

    /// failed/ or needsAttention/ → queued/ with the same key (event `resent`).
    public func resend(_ items: [SpoolItem]) throws(OperationError) {
        try move(items, allowed: [.failed, .needsAttention], to: .queued, event: .resent, detail: "resent by a person")
    }

    private func move(
        _ items: [SpoolItem], allowed: [SpoolState], to target: SpoolState, event: LedgerEvent, detail: String
    ) throws(OperationError) {
        for item in items where !allowed.contains(item.state) {
            throw .wrongState(item.name.description, item.state, expected: allowed)
        }
        let now = Timestamp.now()
        let ledger = Ledger(directory: spool.ledgerDirectory)
        do {
            for item in items {
                try ledger.append(
                    LedgerLine(
                        time: now, round: "manual", subscriber: item.ledgerSubscriber, key: item.ledgerKey,
                        event: event,
                        detail: "\(detail): \(item.state.rawValue)/ → \(target.rawValue)/"))
                try spool.move(item.name, from: item.state, to: target)
            }
            try spool.sync(items.map(\.state) + [target])
        } catch {
            throw .spool(error)
        }
    }
}
