import CourierIdentifiers
import CourierPosix

/// An item found in a state folder: an entry `KEY@SUB.json`, or a file
/// flagged by intake (kept under its safe name).
package struct SpoolItem: Sendable {
    package let name: FileName
    package let state: SpoolState
    /// Nil for a flagged intake file.
    package let entry: EntryName?
    /// The file as it was chosen, when its name is one a script may rename
    /// another file over (a dropped file in `queued/`): a move or removal
    /// of the item leaves a different file under the name alone.
    package var expected: FileStatus?

    package init(name: FileName, state: SpoolState, entry: EntryName?, expected: FileStatus? = nil) {
        self.name = name
        self.state = state
        self.entry = entry
        self.expected = expected
    }

    /// The ledger's (subscriber, key) for this item.
    package var ledgerSubscriber: String { entry?.subscriber.value ?? LedgerLine.noSubscriber }
    package var ledgerKey: String { entry?.key.description ?? name.description }
}

extension Spool {
    /// Every item in a state folder, streamed.
    package func forEachItem(in state: SpoolState, _ visit: (SpoolItem) -> Void) throws(SpoolError) {
        do {
            let stream = try directory(state).entries()
            while let name = try stream.next() {
                visit(SpoolItem(name: name, state: state, entry: EntryName(fileName: name)))
            }
        } catch {
            throw SpoolError(error)
        }
    }

    /// How many items each state folder holds.
    package func counts() throws(SpoolError) -> [SpoolState: Int] {
        var counts: [SpoolState: Int] = [:]
        for state in SpoolState.allCases {
            var count = 0
            var workerFolders: [FileName] = []
            do {
                // sending/ counts every worker's claims on a shared spool.
                let stream = try (state == .sending ? sendingRoot : directory(state)).entries()
                while let name = try stream.next() {
                    if state == .sending && EntryName(fileName: name) == nil {
                        workerFolders.append(name)
                    } else {
                        count += 1
                    }
                }
            } catch {
                throw SpoolError(error)
            }
            for name in workerFolders { count += try claims(of: name) ?? 1 }
            counts[state] = count
        }
        return counts
    }
}
