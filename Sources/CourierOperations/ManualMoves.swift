import CourierPosix
import CourierSpool

/// `ack`, `resend` and `delete`: what a person does to items that need
/// them, with a ledger line each. They do exactly what `mv` (or `rm`)
/// would, plus the trace; each item is settled on its own, so one that
/// cannot be moved does not stop the others.
package struct ManualMoves {
    let session: SpoolSession

    package init(session: SpoolSession) { self.session = session }

    /// What happened to each item.
    package struct Report: Sendable {
        package var moved: [(item: SpoolItem, to: SpoolState?)] = []
        package var refused: [ItemSelection.Refusal] = []
    }

    package static let acknowledgeStates: [SpoolState] = [.needsAttention]
    package static let resendStates: [SpoolState] = [.failed, .needsAttention]
    /// `queued/` too, as postsuper -d: the caller holds the round lock
    /// (`Spool.lockRound`), so no round claims an entry as it goes.
    package static let deleteStates: [SpoolState] = [.needsAttention, .failed, .queued]
    /// What `delete --all` (or a filter without `--state`) looks in: a
    /// whole queue goes only when `--state queued` says so.
    package static let deletePickStates: [SpoolState] = [.needsAttention, .failed]

    /// needsAttention/ → failed/ (event `acknowledged`).
    package func acknowledge(_ items: [SpoolItem]) throws(OperationError) -> Report {
        try settle(
            items, allowed: Self.acknowledgeStates, to: .failed, event: .acknowledged,
            detail: "acknowledged by a person")
    }

    /// failed/ or needsAttention/ → queued/ with the same key (event `resent`).
    package func resend(_ items: [SpoolItem]) throws(OperationError) -> Report {
        try settle(items, allowed: Self.resendStates, to: .queued, event: .resent, detail: "resent by a person")
    }

    /// needsAttention/, failed/ or queued/ → removed (event `deleted`): never
    /// delivered, and a person said so.
    package func delete(_ items: [SpoolItem]) throws(OperationError) -> Report {
        try settle(items, allowed: Self.deleteStates, to: nil, event: .deleted, detail: "deleted by a person")
    }

    /// Items per ledger write and folder fsync: a bulk move of thousands
    /// costs a few writes, not one per item.
    static let group = 256

    /// For each group: the ledger lines first, then the moves, then one
    /// fsync per folder — a crash leaves at worst a line whose move did not
    /// happen, never a move without its line.
    private func settle(
        _ items: [SpoolItem], allowed: [SpoolState], to target: SpoolState?, event: LedgerEvent, detail: String
    ) throws(OperationError) -> Report {
        var report = Report()
        var usable: [SpoolItem] = []
        for item in items {
            if allowed.contains(item.state) {
                usable.append(item)
            } else {
                report.refused.append(
                    ItemSelection.Refusal(
                        name: item.name.description,
                        reason: OperationError.wrongState(item.name.description, item.state, expected: allowed)
                            .description))
            }
        }
        let arrow = target.map { "\($0.rawValue)/" } ?? "removed"
        var start = 0
        while start < usable.count {
            let chunk = usable[start..<min(start + Self.group, usable.count)]
            start += chunk.count
            let now = Timestamp.now()
            var transition = Transition()
            transition.lines = chunk.map { item in
                LedgerLine(
                    time: now, actor: .person, subscriber: item.entry?.subscriber, key: item.ledgerKey, event: event,
                    detail: "\(detail): \(item.state.rawValue)/ → \(arrow)")
            }
            for item in chunk {
                if let target {
                    transition.moves.append(
                        .init(
                            item.name, from: .state(item.state), to: .state(target),
                            expected: item.expected.map { .file($0) }))
                } else {
                    transition.removals.append(
                        .init(item.name, in: .state(item.state), expected: item.expected.map { .file($0) }))
                }
            }
            let committed: Committed
            do { committed = try session.commit(transition) } catch { throw .spool(error) }
            let vanished = Set(
                committed.vanished.map { "\($0.from)\($0.name)" } + committed.absent.map { "\($0.place)\($0.name)" })
            for item in chunk {
                guard !vanished.contains("\(SpoolPlace.state(item.state))\(item.name)") else {
                    report.refused.append(
                        ItemSelection.Refusal(name: item.name.description, reason: "went away while it was being moved")
                    )
                    continue
                }
                report.moved.append((item, target))
            }
        }
        return report
    }
}
