import CourierIdentifiers
import CourierPosix
import CourierSpool
import CourierSupport

/// `courier hold` and `courier release`: the moves a person makes to pause
/// a subscriber, with a ledger line each. They do what `touch` and `rm` in
/// `.courier/held/` would, plus the trace.
package struct Holding {
    let session: SpoolSession

    package init(session: SpoolSession) { self.session = session }

    /// Holds `subscriber`. Holding it again replaces the reason and keeps
    /// the time it has been held since. The ledger line comes first, as for
    /// every change a person makes through courier. The reason is kept as
    /// the ledger keeps it, with the configuration's secrets redacted:
    /// `status` shows it.
    @discardableResult
    package func hold(_ subscriber: SubscriberName, reason: String) throws(OperationError) -> Hold {
        let name = FileName(subscriber.value)
        let now = Timestamp.now()
        let reason = session.redact(reason)
        do throws(SpoolError) {
            let since = try? session.folder(.held).status(of: name)?.modified
            var transition = Transition()
            transition.lines = [
                LedgerLine(
                    time: now, actor: .person, subscriber: subscriber, key: "-", event: .held,
                    detail: reason.isEmpty ? "held by a person" : "held by a person: \(reason)")
            ]
            transition.newFiles = [
                .init(Array((reason + "\n").utf8), as: name, in: .held, replacing: true, modified: since)
            ]
            try session.commit(transition)
            return Hold(subscriber: subscriber, since: since ?? now, reason: reason)
        } catch {
            throw .spool(error)
        }
    }

    /// Releases `subscriber`: nil when it was not held (nothing to do,
    /// and no ledger line).
    package func release(_ subscriber: SubscriberName) throws(OperationError) -> Hold? {
        do throws(SpoolError) {
            guard let hold = try session.spool.holds().first(where: { $0.subscriber == subscriber }) else { return nil }
            let held = "held since \(hold.since.rfc3339)" + (hold.reason.isEmpty ? "" : ": \(hold.reason)")
            try session.commit(
                Transition(
                    lines: [
                        LedgerLine(
                            time: .now(), actor: .person, subscriber: subscriber, key: "-", event: .released,
                            detail: "released by a person; \(held)")
                    ], removals: [.init(FileName(subscriber.value), in: .held)]))
            return hold
        } catch {
            throw .spool(error)
        }
    }
}
