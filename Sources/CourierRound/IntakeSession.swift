import CourierIdentifiers
import CourierPosix
import CourierSpool

/// Intake one dropped file at a time, committed in groups: how a delivery
/// pass takes files in as it meets them in `queued/`, so that a record the
/// same round will send goes from its dropped name straight to
/// `sending/KEY@SUB.json`, its validated bytes kept for the request (one
/// rename, one read and one parse fewer than by way of `queued/`).
final class IntakeSession {
    private let intake: Intake
    private var group: [Intake.Accepted] = []
    private var groupBytes = 0
    /// Entries this group will make, for duplicates within the group;
    /// earlier groups' entries are on disk by the time the next is planned.
    private var planned: [EntryName: [UInt8]] = [:]
    private(set) var report = IntakeReport()
    /// Held from a group's first file to its commit: the duplicate check
    /// and the entries it decides on are one step between workers (and a
    /// file another worker took is gone by the time this one looks), and
    /// the listing it may use is exact under it.
    private var serial: SerialLock?
    /// The duplicate check, by lookups or by a listing (`EntryLookup`).
    private(set) var lookup = EntryLookup()
    /// Runs before the serial lock is taken: what may wait on the network
    /// (an OAuth token for a subscriber intake sends to) is fetched here,
    /// never while the other workers wait for the lock.
    var beforeSerialLock: () -> Void = {}

    init(intake: Intake) {
        self.intake = intake
    }

    /// Accepted files wait for their group's commit.
    var hasPending: Bool { !group.isEmpty }
    var isFull: Bool { group.count >= Intake.groupSize || groupBytes >= Intake.groupBytes }

    /// Validates one dropped file: flagged, left to settle, kept as a route,
    /// or added to the group.
    /// `kind`: what the directory listing said it is, if it did.
    func offer(_ name: FileName, kind: FileStatus.Kind?) throws(SpoolError) {
        if serial == nil {
            beforeSerialLock()
            let lock = try intake.session.serialLock()
            lookup.locked(lock)
            serial = lock
        }
        guard let accepted = try intake.take(name, kind: kind, planned: &planned, lookup: &lookup, into: &report)
        else {
            if group.isEmpty { unlock() }
            return
        }
        group.append(accepted)
        groupBytes += accepted.record.bytes.count
    }

    /// Makes the group durable. Entries `sendNow` picks go to `sending/`
    /// and come back as claimed items; the rest go to `queued/` (workouts
    /// waiting for a route to `awaitingRoute/`).
    func commit(sendNow: (EntryName) -> Bool = { _ in false }) throws(SpoolError) -> [DeliveryItem] {
        defer {
            group.removeAll(keepingCapacity: true)
            planned.removeAll(keepingCapacity: true)
            groupBytes = 0
            unlock()
        }
        let claimed = try IntakeCommit(session: intake.session, round: intake.round)
            .commit(group, sendNow: sendNow, into: &report)
        for accepted in group {
            for entry in accepted.entries { lookup.made(entry.fileName) }
        }
        return claimed
    }

    private func unlock() {
        guard serial != nil else { return }
        lookup.unlocked()
        serial = nil
    }
}
