import CourierIdentifiers
import CourierPosix
import CourierSupport
import Glibc

/// One process's way of changing a spool: opened once, with who this
/// process is (its worker, on a shared spool), its ledger (the worker's day
/// files, every line through the redactor) and the tests' fault plan. Every
/// change goes through `commit`, one `Transition` at a time, so the
/// protocol is written once. Reading needs none of this: a plain `Spool`
/// reads, and cannot write.
package final class SpoolSession {
    package let spool: Spool
    let ledger: Ledger
    /// The ledger's round column for lines the commit writes on its own (a
    /// file found in a move's way): the round's id while one runs.
    package var actor = LedgerActor.unattributed
    /// Folders claims took names from without an fsync (`claim`): the next
    /// commit syncs them with the folders it takes names from, before any
    /// folder it gives names to, so that a claimed entry settled by that
    /// commit never outlives its name in `queued/` after a power cut.
    var unsyncedSources: [DirectoryHandle] = []
    var tagCompaction = EntityTagCompaction()
    /// `queued/`'s dropped names by inode number, listed once on the first
    /// need (`droppedName(sameFileAs:)`).
    var droppedInodes: [UInt64: FileName]?
    /// Handles of the places transitions have named, opened once.
    private var handles: [SpoolPlace: DirectoryHandle] = [:]
    /// The serial lock while something of this process holds it.
    private weak var heldSerialLock: SerialLock?
    /// The serial lock's stamp as this session last left it, and its holds'
    /// epoch (`SerialLock.epoch`).
    private var serialStampLeft: UInt64?
    private var serialEpoch: UInt64 = 0

    /// `worker`: on a shared spool, this process's worker; its claims go to
    /// `sending/WORKER/` and its lines to `YYYY-MM-DD.WORKER.tsv`.
    package init(spool: Spool, worker: WorkerID?, redactor: Redactor = Redactor(), log: EventLog = .silent)
        throws(SpoolError)
    {
        if let worker, spool.worker != worker { try spool.join(as: worker) }
        self.spool = spool
        ledger = Ledger(
            directory: spool.ledgerDirectory, log: log, faults: spool.faults, redactor: redactor, worker: spool.worker)
    }

    package convenience init(
        path: String, worker: WorkerID?, redactor: Redactor = Redactor(), log: EventLog = .silent
    ) throws(SpoolError) {
        try self.init(spool: try Spool(path: path), worker: worker, redactor: redactor, log: log)
    }

    package var path: String { spool.path }
    package var worker: WorkerID? { spool.worker }

    /// Tests' fault injection: every rename, write, sync and removal of a
    /// commit passes it. Nil in production.
    package var faults: FaultPlan? {
        get { spool.faults }
        set {
            spool.faults = newValue
            ledger.faults = newValue
        }
    }

    /// A secret learnt after the session opened (an OAuth access token
    /// fetched during a round): redacted from every line written after,
    /// and from what `redact` returns.
    package func addSecret(_ secret: String) { ledger.addSecret(secret) }

    /// Every secret of `redactor` (a configuration's), for a session that
    /// was opened before they were known.
    package func addSecrets(of redactor: Redactor) { ledger.addSecrets(of: redactor) }

    /// Text a person or a server gave, as courier may keep it in a file of
    /// the spool: with every secret the configuration knows replaced. The
    /// ledger does this to every line itself; state files that keep such
    /// text (a hold's reason) use this.
    package func redact(_ text: String) -> String { ledger.redactor.redact(text) }

    /// The short lock for what must stay serial (`Spool.serialLock`). Taken
    /// once per process: while this process holds it, asking again returns
    /// the same hold (a second flock of the file would wait for the first).
    package func serialLock() throws(SpoolError) -> SerialLock {
        if let held = heldSerialLock { return held }
        let lock = try spool.serialLock()
        // The session's own holds, one after another (a round's commits
        // between its intake groups), leave the epoch as it was.
        if lock.foundStamp == nil || lock.foundStamp != serialStampLeft { serialEpoch += 1 }
        serialStampLeft = lock.leftStamp
        lock.epoch = serialEpoch
        heldSerialLock = lock
        return lock
    }

    /// The open folder a transition means by `place`, for reading what is
    /// there; folders of state files (`held/`, `etags/SUB/`,
    /// `catalogs/NAME/`) are made, and their parent synced, on first use.
    package func folder(_ place: SpoolPlace) throws(SpoolError) -> DirectoryHandle { try handle(place) }

    func handle(_ place: SpoolPlace) throws(SpoolError) -> DirectoryHandle {
        // The spool's own folders are open for its life, and asked for
        // several times per record: no table for them.
        switch place {
        case .state(let state): return spool.directory(state)
        case .sendingRoot: return spool.sendingRoot
        case .control: return spool.control
        case .tmp: return spool.tmp
        case .ledger: return spool.ledgerDirectory
        case .claims(let worker):
            return try opened(place) { () throws(SystemError) in
                try spool.sendingRoot.openDirectory(worker, as: "sending/\(worker)")
            }
        case .held:
            return try opened(place) { () throws(SystemError) in
                try folder(Spool.heldName, in: spool.control, as: ".courier/held")
            }
        case .entityTags(let subscriber):
            return try opened(place) { () throws(SystemError) in
                let tags = try folder(EntityTagStore.folderName, in: spool.control, as: ".courier/etags")
                return try folder(FileName(subscriber.value), in: tags, as: ".courier/etags/\(subscriber)")
            }
        case .catalog(let name):
            return try opened(place) { () throws(SystemError) in
                let catalogs = try folder(FileName("catalogs"), in: spool.root, as: "catalogs")
                return try folder(FileName(name.value), in: catalogs, as: "catalogs/\(name)")
            }
        }
    }

    /// The folder `open` opens (or makes), the first time it is asked for.
    private func opened(_ place: SpoolPlace, _ open: () throws(SystemError) -> DirectoryHandle)
        throws(SpoolError) -> DirectoryHandle
    {
        if let known = handles[place] { return known }
        let handle: DirectoryHandle
        do throws(SystemError) { handle = try open() } catch { throw SpoolError(error) }
        handles[place] = handle
        return handle
    }

    /// A folder made if missing (its parent fsynced, so that it survives a
    /// power cut as a name), then opened.
    private func folder(_ name: FileName, in parent: DirectoryHandle, as shown: String) throws(SystemError)
        -> DirectoryHandle
    {
        if try parent.makeDirectory(name, mode: 0o750) {
            try faults?.check(.sync, path: parent.displayPath)
            try parent.sync()
            faults?.powerCut?.syncedFolder(parent)
        }
        return try parent.openDirectory(name, as: shown)
    }
}
