import CourierPosix
import CourierSpool
import CourierSupport

/// `courier hold` and `courier release`: the moves a person makes to pause
/// a subscriber, with a ledger line each. They do what `touch` and `rm` in
/// `.courier/held/` would, plus the trace.
public struct Holding {
    let spool: Spool

    public init(spool: Spool) { self.spool = spool }

    /// Holds `subscriber`. Holding it again replaces the reason and keeps
    /// the time it has been held since. The ledger line comes first, as for
    /// every change a person makes through courier.
    @discardableResult
    public func hold(_ subscriber: SubscriberName, reason: String) throws(OperationError) -> Hold {
        let name = FileName(subscriber.value)
        let now = Timestamp.now()
        do throws(SpoolError) {
            guard let folder = try spool.heldFolder(creating: true) else {
                throw .operation("create", path: spool.control.displayPath(of: FileName("held")), .noSuchFile)
            }
            let since = try? folder.status(of: name)?.modified
            try Ledger(directory: spool.ledgerDirectory, worker: spool.worker).append(
                LedgerLine(
                    time: now, round: "manual", subscriber: subscriber.value, key: "-", event: .held,
                    detail: reason.isEmpty ? "held by a person" : "held by a person: \(reason)"))
            try spool.deliverNewFile(Array((reason + "\n").utf8), named: name, into: folder)
            if let since {
                do { try folder.setModified(name, to: since) } catch { throw SpoolError(error) }
            }
            return Hold(subscriber: subscriber, since: since ?? now, reason: reason)
        } catch {
            throw .spool(error)
        }
    }

    /// Releases `subscriber`: nil when it was not held (nothing to do,
    /// and no ledger line).
    public func release(_ subscriber: SubscriberName) throws(OperationError) -> Hold? {
        do throws(SpoolError) {
            guard let folder = try spool.heldFolder(),
                let hold = try spool.holds().first(where: { $0.subscriber == subscriber })
            else { return nil }
            let held = "held since \(hold.since.rfc3339)" + (hold.reason.isEmpty ? "" : ": \(hold.reason)")
            try Ledger(directory: spool.ledgerDirectory, worker: spool.worker).append(
                LedgerLine(
                    time: .now(), round: "manual", subscriber: subscriber.value, key: "-", event: .released,
                    detail: "released by a person; \(held)"))
            do {
                try folder.remove(FileName(subscriber.value))
                try folder.sync()
            } catch {
                throw SpoolError(error)
            }
            return hold
        } catch {
            throw .spool(error)
        }
    }
}
