import CourierIdentifiers
import CourierPosix
import CourierSpool

/// Which items a bulk command (`resend`, `ack`, `delete`) acts on: the
/// names given, or — with no names — every item in the command's states
/// that passes the filters. The filters narrow named items too, so
/// `resend --older-than 1h a b` moves only those of a and b that are old.
package struct ItemSelection: Sendable {
    package var names: [String] = []
    /// Names were asked for, perhaps none (`-` with an empty standard
    /// input): then only they are acted on, so `grep … | courier delete -
    /// --state failed` that finds nothing deletes nothing.
    package var namesGiven = false
    /// Every item of the command's states; needed when nothing else says
    /// which, so a bare `courier resend` never moves a whole folder.
    package var all = false
    package var subscriber: SubscriberName?
    package var states: Set<SpoolState>?
    /// By when the item was taken in (`IntakeTimes`).
    package var olderThan: Duration?

    package init() {}

    /// True when it names nothing and filters nothing.
    package var isEmpty: Bool {
        names.isEmpty && !namesGiven && !all && subscriber == nil && states == nil && olderThan == nil
    }

    /// A name that could not be acted on, and why.
    package struct Refusal: Sendable, Equatable {
        package let name: String
        package let reason: String
    }

    /// What a selection came to: the items to act on, the names refused
    /// (not found, or in a state the command does not take), and the
    /// flagged files (`invalid-…`) that `--all` or a filter passed over:
    /// they are no subscriber's entry, and are acted on only by name.
    package struct Resolved: Sendable {
        package var items: [SpoolItem] = []
        package var refused: [Refusal] = []
        package var skipped: [SpoolItem] = []
    }

    /// The items chosen from `allowed` states, and the names refused (not
    /// found, or in a state the command does not take). Without names and
    /// without `states`, only the `picking` states are looked in (`delete
    /// --all` leaves `queued/` alone unless `--state queued` says so);
    /// by default every allowed state.
    /// `session`: a command's own, to resolve an entry held as one file
    /// by two state folders (a rename a power cut left half done) before
    /// acting on it.
    package func resolve(
        in spool: Spool, allowed: [SpoolState], picking: [SpoolState]? = nil, now: Timestamp = .now(),
        session: SpoolSession? = nil
    ) throws(OperationError) -> (items: [SpoolItem], refused: [Refusal]) {
        let resolved = try choose(in: spool, allowed: allowed, picking: picking, now: now, session: session)
        return (resolved.items, resolved.refused)
    }

    /// `resolve`, with the flagged files a pick passed over.
    package func choose(
        in spool: Spool, allowed: [SpoolState], picking: [SpoolState]? = nil, now: Timestamp = .now(),
        session: SpoolSession? = nil
    ) throws(OperationError) -> Resolved {
        let states = allowed.filter { self.states?.contains($0) ?? true }
        var items: [SpoolItem] = []
        var refused: [Refusal] = []
        var flagged: [SpoolItem] = []
        if names.isEmpty && !namesGiven {
            let picked = self.states == nil ? states.filter { (picking ?? allowed).contains($0) } : states
            for state in picked {
                do {
                    try spool.forEachItem(in: state) { item in
                        if item.entry != nil { items.append(item) } else { flagged.append(item) }
                    }
                } catch {
                    throw .spool(error)
                }
            }
        } else {
            for name in names {
                var found: [SpoolItem]
                do { found = try spool.resolve(name) } catch let error where error.isNotFound {
                    refused.append(Refusal(name: name, reason: error.description))
                    continue
                }
                if let session, let item = found.first, found.count > 1, found.allSatisfy({ $0.name == item.name }) {
                    let kept: SpoolState?
                    do { kept = try session.resolveHalfRename(item.name, in: found.map(\.state)) } catch {
                        throw .spool(error)
                    }
                    if let kept { found = found.filter { $0.state == kept } }
                }
                let places = found.map { "\($0.state.rawValue)/\($0.name)" }
                // One name in two states is not for a command to choose
                // between: a move would meet the other in its way.
                if Set(found.map(\.name)).count < found.count {
                    refused.append(
                        Refusal(
                            name: name,
                            reason: "is in \(places.joined(separator: " and ")): an entry belongs in one state; "
                                + "move or remove one of them by hand"))
                    continue
                }
                let usable = found.filter { states.contains($0.state) }
                if usable.isEmpty {
                    refused.append(
                        Refusal(
                            name: name,
                            reason: "is in \(places.joined(separator: ", ")), not in "
                                + states.map { "\($0.rawValue)/" }.joined(separator: " or ")))
                }
                items += usable
            }
        }
        // An item named twice (`a@s a@s`, or by its key and its file name)
        // moves once: the second move would find it gone and report it.
        var seen: [SpoolState: Set<FileName>] = [:]
        var chosen: [SpoolItem] = []
        let intake = IntakeTimes(spool: spool)
        func isOldEnough(_ item: SpoolItem) -> Bool {
            guard let olderThan else { return true }
            guard let status = try? spool.directory(item.state).status(of: item.name) else { return false }
            return intake.of(item, status) < now - olderThan
        }
        for var item in items where passes(item) && seen[item.state, default: []].insert(item.name).inserted {
            guard isOldEnough(item) else { continue }
            if item.entry == nil && item.state == .queued {
                // A producer may rename its next record over this name.
                do { item.expected = try spool.directory(.queued).status(of: item.name) } catch {
                    throw .spool(SpoolError(error))
                }
            }
            chosen.append(item)
        }
        // A file of no subscriber is passed over by a pick for one, not
        // skipped: only a pick of everything says what it left.
        let skipped = subscriber == nil ? flagged.filter(isOldEnough) : []
        return Resolved(items: chosen, refused: refused, skipped: skipped)
    }

    private func passes(_ item: SpoolItem) -> Bool {
        guard let subscriber else { return true }
        return item.entry?.subscriber == subscriber
    }
}

extension OperationError {
    /// The name matched nothing at all (as opposed to a spool fault).
    var isNotFound: Bool {
        switch self {
        case .noSuchEntry, .notAnEntry: return true
        default: return false
        }
    }
}
