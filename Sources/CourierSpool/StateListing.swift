import CourierPosix

/// Every name in the six state folders at one moment, as fingerprints
/// (`FileName.fingerprint`): intake's duplicate check asks it before it
/// looks a name up in six folders. A name it does not hold is in none of
/// them; one it holds may be (or shares a fingerprint with one that is),
/// and is looked up. Eight bytes a name, so a million names cost 8 MB.
///
/// It stays exact only while nobody else creates or moves names: it is
/// taken on a spool with one worker (another worker's claims, deferrals
/// and settled items move without a lock), under the serial lock, which
/// every command that creates or moves names holds for its commit
/// (`SpoolSession.commit`); its holder learns from the lock's count
/// whether anyone held it since (`SerialLock`). The names its own round
/// makes are added as they are made.
package struct StateListing {
    private let sorted: [UInt64]
    private var added: Set<UInt64> = []

    init(fingerprints: [UInt64]) {
        sorted = fingerprints.sorted()
    }

    /// Names listed, and added since.
    package var count: Int { sorted.count + added.count }

    /// False when no state folder held `name` at the listing, nor was it
    /// added since.
    package func mayHold(_ name: FileName) -> Bool {
        let fingerprint = name.fingerprint
        if added.contains(fingerprint) { return true }
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < fingerprint { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count && sorted[low] == fingerprint
    }

    /// A name made since the listing (the round's own new entries).
    package mutating func add(_ name: FileName) {
        added.insert(name.fingerprint)
    }
}

extension Spool {
    /// The state folders listed, in the order `find` looks in them. Only a
    /// spool with one worker is listed: its `sending/` is all of it.
    package func listStateFolders() throws(SpoolError) -> StateListing {
        var found: [UInt64] = []
        do {
            for state in SpoolState.allCases { try directory(state).entries().fingerprints(into: &found) }
        } catch {
            throw SpoolError(error)
        }
        return StateListing(fingerprints: found)
    }

    /// Bytes of the state folders' directories: what listing them costs,
    /// in a unit a failing lookup can be compared with.
    package func stateFolderBytes() throws(SpoolError) -> Int {
        var total = 0
        do {
            for state in SpoolState.allCases { total += try directory(state).descriptor.status().size }
        } catch {
            throw SpoolError(error)
        }
        return total
    }
}
