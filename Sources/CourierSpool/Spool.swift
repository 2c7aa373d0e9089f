import CourierIdentifiers
import CourierPosix
import Glibc

/// An open spool: one directory handle per state folder, all operations
/// relative to them. Not shared between threads.
package final class Spool {
    package let path: String
    package let root: DirectoryHandle
    package let tmp: DirectoryHandle
    package let ledgerDirectory: DirectoryHandle
    /// `.courier/`: locks and small state files.
    package let control: DirectoryHandle
    private let queued, awaitingRoute, sent, failed, needsAttention: DirectoryHandle
    /// `sending/` itself. On a shared spool each worker claims into its
    /// own folder of it, `sending/WORKER/`, which `directory(.sending)`
    /// then is.
    package let sendingRoot: DirectoryHandle
    private var sending: DirectoryHandle
    /// This process's worker on a shared spool (`join(as:)`); nil when the
    /// spool has one worker.
    package private(set) var worker: WorkerID?
    private var stagingNames = StagingNames()
    /// Tests' fault injection (`SpoolSession.faults`); nil in production.
    var faults: FaultPlan?
    /// False on a file system where syncfs(2) does nothing (FUSE:
    /// GlusterFS): a group's files are then fsynced one by one.
    package var syncfsReachesDisk: Bool

    static let tmpName = "tmp"
    static let ledgerName = "ledger"
    static let controlName = ".courier"

    package init(path: String) throws(SpoolError) {
        self.path = path
        do {
            root = try DirectoryHandle.open(path: path)
        } catch {
            throw .notASpool(path: path, missing: path, error.errno)
        }
        let root = self.root
        tmp = try Self.openFolder(Self.tmpName, in: root, spool: path)
        ledgerDirectory = try Self.openFolder(Self.ledgerName, in: root, spool: path)
        control = try Self.openFolder(Self.controlName, in: root, spool: path)
        queued = try Self.openFolder(SpoolState.queued.rawValue, in: root, spool: path)
        awaitingRoute = try Self.openFolder(SpoolState.awaitingRoute.rawValue, in: root, spool: path)
        syncfsReachesDisk = root.syncFileSystemReachesDisk
        sendingRoot = try Self.openFolder(SpoolState.sending.rawValue, in: root, spool: path)
        sending = sendingRoot
        sent = try Self.openFolder(SpoolState.sent.rawValue, in: root, spool: path)
        failed = try Self.openFolder(SpoolState.failed.rawValue, in: root, spool: path)
        needsAttention = try Self.openFolder(SpoolState.needsAttention.rawValue, in: root, spool: path)
    }

    /// A folder of the spool, named in messages relative to the spool
    /// (`queued/X`), as operators know it.
    private static func openFolder(_ name: String, in root: DirectoryHandle, spool path: String) throws(SpoolError)
        -> DirectoryHandle
    {
        do {
            return try root.openDirectory(FileName(name), as: name)
        } catch {
            throw .notASpool(path: path, missing: name + "/", error.errno)
        }
    }

    /// Root's `init` in a spool directory another user owns (the manual
    /// install's `install -d -o courier`, then init without `sudo -u`):
    /// the folders it made, and any root made before, become the spool
    /// owner's, with its group, or none of that user's rounds could write
    /// them. A folder the owner has already keeps its group (a producers'
    /// group on tmp/ and queued/).
    private static func giveFolders(in root: DirectoryHandle, names: [String], held control: DirectoryHandle)
        throws(SystemError)
    {
        guard geteuid() == 0 else { return }
        let owner = try root.owner()
        guard owner.user != 0 else { return }
        var folders = try names.map { name throws(SystemError) in try root.openDirectory(FileName(name)) }
        folders.append(try control.openDirectory(heldName))
        for folder in folders where try folder.owner().user != owner.user {
            try folder.setOwner(owner)
        }
    }

    /// `courier init`: creates whatever of the layout is missing (mode 0750,
    /// as the process umask allows) and opens the result. Safe to repeat.
    @discardableResult
    package static func create(at path: String) throws(SpoolError) -> Spool {
        var prefix = path.hasPrefix("/") ? "" : "."
        do throws(SystemError) {
            for component in path.split(separator: "/") {
                prefix += "/" + component
                try PathOperations.makeDirectory(prefix, mode: 0o750)
            }
            let root = try DirectoryHandle.open(path: path)
            let names = [tmpName, ledgerName, controlName] + SpoolState.allCases.map(\.rawValue)
            for name in names {
                try root.makeDirectory(FileName(name), mode: 0o750)
            }
            // So that `touch .courier/held/NAME` holds a subscriber from the start.
            let control = try root.openDirectory(FileName(controlName))
            try control.makeDirectory(heldName, mode: 0o750)
            try giveFolders(in: root, names: names, held: control)
        } catch {
            throw SpoolError(error)
        }
        return try Spool(path: path)
    }

    /// `join(as:)`'s: this handle's claims go to `folder` from now on.
    func claimInto(_ folder: DirectoryHandle, as worker: WorkerID) {
        sending = folder
        self.worker = worker
        stagingNames.worker = worker
    }

    package func directory(_ state: SpoolState) -> DirectoryHandle {
        switch state {
        case .queued: return queued
        case .awaitingRoute: return awaitingRoute
        case .sending: return sending
        case .sent: return sent
        case .failed: return failed
        case .needsAttention: return needsAttention
        }
    }

    /// The state an item is in now, nil when no state folder holds it (on a
    /// shared spool, another worker's claim is in `sending/` too: `find`).
    package func locate(_ name: FileName) throws(SpoolError) -> SpoolState? {
        try find(name)?.state
    }

    /// The state an item is in now and the folder that holds it. On a
    /// shared spool another worker's claim is in `sending/` as much as this
    /// one's: an id it is sending is used, whichever worker looks.
    package func find(_ name: FileName) throws(SpoolError) -> (state: SpoolState, folder: DirectoryHandle)? {
        for state in SpoolState.allCases {
            do {
                if try directory(state).contains(name) { return (state, directory(state)) }
            } catch {
                throw SpoolError(error)
            }
        }
        return try claimFolderElsewhere(holding: name).map { (.sending, $0) }
    }

    /// `TIME.PID_N.NAME` (`TIME.PID_N.WORKER:NAME` on a shared spool), unique
    /// per process and call, as maildir names are.
    package func uniqueTemporaryName(for name: FileName) -> FileName {
        stagingNames.next(for: name)
    }

    /// Reads a whole small file from a state folder; a file over `limit`
    /// bytes is refused (EFBIG), never returned cut short.
    package func read(_ name: FileName, in state: SpoolState, limit: Int) throws(SpoolError) -> [UInt8] {
        let folder = directory(state)
        do throws(SystemError) {
            let file = try folder.openFile(name, flags: O_RDONLY)
            let bytes = try file.read(upTo: limit + 1)
            guard bytes.count <= limit else { throw SystemError("read", path: file.path, Errno(EFBIG)) }
            return bytes
        } catch {
            throw .operation("read", path: folder.displayPath(of: name), error.errno)
        }
    }

    /// A small state file in `.courier/`; nil when it does not exist yet.
    /// Any other failure is thrown: a journal or state file that cannot be
    /// read must not pass for one never written.
    package func controlFile(_ name: String, limit: Int = 64 << 20) throws(SpoolError) -> [UInt8]? {
        do {
            return try control.openFile(FileName(name), flags: O_RDONLY).read(upTo: limit)
        } catch let error where error.errno == .noSuchFile {
            return nil
        } catch {
            throw SpoolError(error)
        }
    }

    /// `controlFile` for notes that are only shown to people (the last
    /// round, the notifier's health): one that cannot be read is shown as
    /// absent rather than failing the command that shows it.
    package func readControlFile(_ name: String, limit: Int = 64 << 20) -> [UInt8]? {
        try? controlFile(name, limit: limit)
    }

    /// One round at a time per spool: an exclusive flock on
    /// `.courier/round.lock`. Nil when another round holds it and `wait`
    /// is false.
    package func lockRound(wait: Bool) throws(SpoolError) -> RoundLock? {
        let name = FileName("round.lock")
        do {
            let file = try control.openFile(name, flags: O_RDWR | O_CREAT, mode: 0o640)
            guard try file.lockExclusively(wait: wait) else { return nil }
            return RoundLock(file: file)
        } catch {
            throw .operation("lock", path: control.displayPath(of: name), error.errno)
        }
    }
}

/// Proof that this process runs the spool's round; the lock goes when
/// this value does (or the process dies).
package final class RoundLock {
    let file: FileDescriptor
    init(file: FileDescriptor) { self.file = file }
}
