import CourierConfig
import CourierIdentifiers
import CourierSpool

/// `courier copy`: a deliberate duplicate under a new key `ID#N`, N the
/// next number no entry or ledger line has used, so that an idempotent
/// receiver stores it again. The original is untouched.
package struct Copier {
    let session: SpoolSession
    let configuration: Configuration

    package init(session: SpoolSession, configuration: Configuration) {
        self.session = session
        self.configuration = configuration
    }

    private var spool: Spool { session.spool }

    package func copy(_ item: SpoolItem, to subscriber: SubscriberName? = nil) throws(OperationError) -> EntryName {
        guard let original = item.entry else { throw .notAnEntry(item.name.description) }
        let target = subscriber ?? original.subscriber
        guard configuration.subscriber(named: target) != nil else { throw .unknownSubscriber(target.value) }
        // Two workers numbering copies at once would pick the same number.
        let serial: SerialLock
        do { serial = try session.serialLock() } catch { throw .spool(error) }
        defer { withExtendedLifetime(serial) {} }
        let copy = EntryName(
            key: DeliveryKey(id: original.key.id, copy: try nextCopyNumber(of: original.key.id)), subscriber: target)
        do {
            let bytes = try spool.read(item.name, in: item.state, limit: configuration.maxRecordSize)
            // The line first, as for every change: a crash leaves at worst a
            // copy number used by a line alone, never a copy without one.
            try session.commit(
                Transition(
                    lines: [
                        LedgerLine(
                            time: .now(), actor: .person, subscriber: target, key: copy.key.description,
                            event: .copied, detail: "copy of \(original) (\(item.state.rawValue)/)")
                    ], newFiles: [.init(bytes, as: copy.fileName, in: .state(.queued), replacing: false)]))
        } catch {
            throw .spool(error)
        }
        return copy
    }

    /// One more than the highest copy number of `id` in any state folder or
    /// ledger line; the original counts as 1, so the first copy is `#2`.
    func nextCopyNumber(of id: RecordID) throws(OperationError) -> Int {
        var highest = 1
        for state in SpoolState.allCases {
            do {
                try spool.forEachItem(in: state) { item in
                    if let entry = item.entry, entry.key.id == id { highest = max(highest, entry.key.copy ?? 1) }
                }
            } catch {
                throw .spool(error)
            }
        }
        do {
            _ = try Ledger.read(from: spool.ledgerDirectory) { line in
                if let key = DeliveryKey(line.key), key.id == id { highest = max(highest, key.copy ?? 1) }
            }
        } catch {
            throw .spool(error)
        }
        return highest + 1
    }
}
