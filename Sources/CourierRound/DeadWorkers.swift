import CourierIdentifiers
import CourierPosix
import CourierSpool

/// On a shared spool, what dead workers had claimed goes back to
/// `queued/`, as `Recovery` returns a round's own. A worker is dead when
/// its lock can be taken; holding it while its claims move means it cannot
/// come back halfway. Entries straight in `sending/` are from before the
/// spool was shared: no single-worker round can be running (every worker
/// holds `round.lock` shared), so they go back too.
struct DeadWorkers {
    let session: SpoolSession
    let round: RoundID
    let log: EventLog

    private var spool: Spool { session.spool }

    func recover() throws(SpoolError) -> Int {
        let root = spool.sendingRoot
        let names: [FileName]
        do { names = try root.sortedNames() } catch { throw SpoolError(error) }
        var recovered = 0
        var loose: [FileName] = []
        for name in names {
            if name.description == spool.worker?.value { continue }
            guard let claims = try spool.claims(of: name) else {
                if EntryName(fileName: name) != nil { loose.append(name) }
                continue
            }
            guard claims > 0, let lock = try spool.lockIfDead(name) else { continue }
            let folder: DirectoryHandle
            do { folder = try root.openDirectory(name, as: "sending/\(name)") } catch { throw SpoolError(error) }
            let claimed: [FileName]
            do { claimed = try folder.sortedNames() } catch { throw SpoolError(error) }
            recovered += try withExtendedLifetime(lock) { () throws(SpoolError) -> Int in
                try returnToQueued(
                    claimed, from: .claims(of: name), why: "worker \(name) stopped with it in sending/\(name)/")
            }
        }
        if !loose.isEmpty { recovered += try returnToQueued(loose, from: .sendingRoot, why: "was in sending/") }
        return recovered
    }

    /// One transition: the ledger lines, then the renames, then the
    /// folders' fsyncs; a crash in between leaves them for the next worker.
    private func returnToQueued(_ names: [FileName], from place: SpoolPlace, why: String) throws(SpoolError) -> Int {
        guard !names.isEmpty else { return 0 }
        let now = Timestamp.now()
        var transition = Transition()
        transition.lines = names.map { name in
            let entry = EntryName(fileName: name)
            return LedgerLine(
                time: now, actor: .round(round), subscriber: entry?.subscriber,
                key: entry?.key.description ?? name.description, event: .recovered, detail: "\(why); back to queued/")
        }
        transition.moves = names.map { Transition.Move($0, from: place, to: .state(.queued)) }
        let moved = names.count - (try session.commit(transition)).vanished.count
        log(.notice, "recovered \(moved) entries: \(why)")
        return moved
    }
}
