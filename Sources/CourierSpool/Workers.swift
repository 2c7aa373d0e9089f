import CourierIdentifiers
import CourierPosix
import Glibc

/// Several workers on one spool (`shared = yes`). What a worker has
/// claimed is in `sending/WORKER/`; whether it is alive is whether it holds
/// `.courier/workers/WORKER.lock`, an exclusive flock the file system
/// releases when the process dies (or, on a network file system, when its
/// client is gone). A worker recovers the claims of workers whose lock it
/// can take, never of one that holds it, and never by looking at times.
extension Spool {
    static let workersName = FileName("workers")
    static let roundLockName = FileName("round.lock")
    static let serialLockName = FileName("serial.lock")
    static let serialTurnstileName = FileName("serial.turnstile")

    /// Makes this spool handle claim into `sending/WORKER/` (made if missing).
    package func join(as worker: WorkerID) throws(SpoolError) {
        let name = FileName(worker.value)
        do {
            _ = try sendingRoot.makeDirectory(name, mode: 0o750)
            claimInto(try sendingRoot.openDirectory(name, as: "sending/\(worker)"), as: worker)
        } catch {
            throw SpoolError(error)
        }
    }

    /// `.courier/workers/`, made if missing.
    func workersFolder() throws(SpoolError) -> DirectoryHandle {
        do {
            _ = try control.makeDirectory(Self.workersName, mode: 0o750)
            return try control.openDirectory(Self.workersName, as: ".courier/workers")
        } catch {
            throw SpoolError(error)
        }
    }

    private func lockFile(_ name: FileName, in folder: DirectoryHandle) throws(SpoolError) -> FileDescriptor {
        do {
            return try folder.openFile(name, flags: O_RDWR | O_CREAT, mode: 0o640)
        } catch {
            throw .operation("lock", path: folder.displayPath(of: name), error.errno)
        }
    }

    private func take(_ file: FileDescriptor, shared: Bool, wait: Bool) throws(SpoolError) -> RoundLock? {
        do {
            let held = shared ? try file.lockShared(wait: wait) : try file.lockExclusively(wait: wait)
            return held ? RoundLock(file: file) : nil
        } catch {
            throw .operation("lock", path: file.path, error.errno)
        }
    }

    /// A worker's round on a shared spool: `round.lock` shared (so that no
    /// single-worker round runs beside it) and its own lock exclusive (one
    /// process per worker id). Nil when either is busy and `wait` is false.
    package func lockWorkerRound(wait: Bool) throws(SpoolError) -> [RoundLock]? {
        guard let worker else { return try lockRound(wait: wait).map { [$0] } }
        guard let spoolWide = try take(lockFile(Self.roundLockName, in: control), shared: true, wait: wait)
        else { return nil }
        let own = try take(lockFile(FileName(worker.value + ".lock"), in: workersFolder()), shared: false, wait: wait)
        guard let own else { return nil }
        return [spoolWide, own]
    }

    /// The short lock for what must stay serial: an intake group (its
    /// duplicate check and its entries), attaching routes, `copy`
    /// numbering, prune, and every commit of a command that creates or
    /// moves names (a catalog sync has its own lock, `catalog-NAME.lock`).
    /// Taken on every spool: with one worker the round lock keeps rounds
    /// apart, but not a round from the commands beside it, and a round's
    /// intake lists the state folders under this lock (`StateListing`).
    /// Held until the value goes (`withExtendedLifetime`).
    ///
    /// Both locks are waited for by asking again, never by a blocking
    /// flock, which GlusterFS can leave unanswered after the lock is free
    /// (`lockExclusivelyAskingAgain`); asking again keeps no queue, so a
    /// holder that lets go and asks at once (a round streaming dropped
    /// files in, between holds) would win every time. So whoever asks
    /// waits in the turnstile first (`serial.turnstile`) and holds it
    /// until it has the lock: a holder asking again queues behind the
    /// one waiting. The turnstile is only for fairness: a person who may
    /// write `serial.lock` but not `.courier/` (the spool's own user made
    /// both, the turnstile after its upgrade) takes the lock without it.
    package func serialLock() throws(SpoolError) -> SerialLock {
        let turnstile = try turnstileFile()
        defer { withExtendedLifetime(turnstile) {} }
        if let turnstile {
            do {
                try turnstile.lockExclusivelyAskingAgain()
            } catch {
                throw .operation("lock", path: turnstile.path, error.errno)
            }
        }
        let file = try lockFile(Self.serialLockName, in: control)
        do {
            try file.lockExclusivelyAskingAgain()
            return try SerialLock(holding: file)
        } catch {
            throw .operation("lock", path: file.path, error.errno)
        }
    }

    /// The turnstile, opened for writing, or (flock needs no more) for
    /// reading; nil when this user may do neither, or cannot create it
    /// (a file system out of inodes or quota: the moves that free room,
    /// prune's and a person's, need no new file of their own).
    private func turnstileFile() throws(SpoolError) -> FileDescriptor? {
        let denied: Set<Errno> = [Errno(EACCES), Errno(EPERM), Errno(EROFS)]
        let full: Set<Errno> = [.noSpace, Errno(EDQUOT)]
        do {
            return try control.openFile(Self.serialTurnstileName, flags: O_RDWR | O_CREAT, mode: 0o640)
        } catch let error where denied.contains(error.errno) || full.contains(error.errno) {
            do {
                return try control.openFile(Self.serialTurnstileName, flags: O_RDONLY)
            } catch let error where denied.contains(error.errno) || error.errno == .noSuchFile {
                return nil
            } catch {
                throw .operation("lock", path: control.displayPath(of: Self.serialTurnstileName), error.errno)
            }
        } catch {
            throw .operation("lock", path: control.displayPath(of: Self.serialTurnstileName), error.errno)
        }
    }

    /// Takes a dead worker's lock, so that its claims can be recovered while
    /// it cannot come back; nil while it is alive.
    package func lockIfDead(_ worker: FileName) throws(SpoolError) -> RoundLock? {
        try take(lockFile(FileName(worker.description + ".lock"), in: workersFolder()), shared: false, wait: false)
    }

    /// The workers that have claimed into `sending/` or taken a lock,
    /// with whether each is alive now and how many claims it holds. A
    /// probe takes a shared lock for an instant, which a live worker's
    /// exclusive one refuses. Read-only: `status` run by someone who may
    /// not write the spool creates nothing and opens nothing for writing.
    package func workers() throws(SpoolError) -> [WorkerState] {
        let folder: DirectoryHandle?
        var lockNames: [FileName] = []
        let sendingNames: [FileName]
        do {
            folder = try? control.openDirectory(Self.workersName, as: ".courier/workers")
            if let folder { lockNames = try folder.sortedNames() }
            sendingNames = try sendingRoot.sortedNames()
        } catch {
            throw SpoolError(error)
        }
        // Each worker's claims, counted once; a lock alone means none.
        var claimed: [String: Int] = [:]
        for name in lockNames.map(\.description) where name.hasSuffix(".lock") { claimed[String(name.dropLast(5))] = 0 }
        for name in sendingNames {
            if let count = try claims(of: name) { claimed[name.description] = count }
        }
        var found: [WorkerState] = []
        for (name, count) in claimed.sorted(by: { $0.key < $1.key }) {
            guard let id = try? WorkerID(name) else { continue }
            found.append(WorkerState(worker: id, alive: try isRunning(name, in: folder), claims: count))
        }
        return found
    }

    /// Whether a worker holds its lock now; one that never took one does not.
    private func isRunning(_ worker: String, in folder: DirectoryHandle?) throws(SpoolError) -> Bool {
        guard let folder else { return false }
        let name = FileName(worker + ".lock")
        do {
            let file = try folder.openFile(name, flags: O_RDONLY)
            return try !file.lockShared(wait: false)
        } catch let error where error.errno == .noSuchFile {
            return false
        } catch {
            throw .operation("lock", path: folder.displayPath(of: name), error.errno)
        }
    }

    /// The folder of `sending/` holding another worker's claim of `name`:
    /// its `sending/WORKER/`, or `sending/` itself for an entry from before
    /// the spool was shared. Nil on a spool with one worker, whose
    /// `sending/` is all of it. Only folders are looked into: a symbolic
    /// link or a file among the workers' folders is never followed.
    package func claimFolderElsewhere(holding name: FileName) throws(SpoolError) -> DirectoryHandle? {
        guard let worker else { return nil }
        do {
            if try sendingRoot.contains(name) { return sendingRoot }
            let stream = try sendingRoot.entries()
            while let folder = try stream.next() {
                guard folder.description != worker.value, EntryName(fileName: folder) == nil else { continue }
                var kind = stream.lastKind
                if kind == nil { kind = try sendingRoot.status(of: folder)?.kind }
                guard kind == .directory else { continue }
                let claims: DirectoryHandle
                do { claims = try sendingRoot.openDirectory(folder, as: "sending/\(folder)") } catch let error
                    where error.errno == .noSuchFile
                {
                    continue
                }
                if try claims.contains(name) { return claims }
            }
        } catch {
            throw SpoolError(error)
        }
        return nil
    }

    /// The entries in `sending/NAME/`; nil when that is not a folder.
    package func claims(of name: FileName) throws(SpoolError) -> Int? {
        do {
            guard try sendingRoot.status(of: name)?.kind == .directory else { return nil }
            return try sendingRoot.openDirectory(name).countNames()
        } catch {
            throw SpoolError(error)
        }
    }
}

/// One worker of a shared spool, as `status` shows it.
package struct WorkerState: Sendable, Equatable {
    package let worker: WorkerID
    package let alive: Bool
    /// Entries in its `sending/WORKER/`.
    package let claims: Int
}

/// `.courier/serial.lock`, held. Its first eight bytes count the times it
/// has been taken, each holder adding one; the next eight are a random
/// stamp each holder writes anew. A holder that finds the stamp it left
/// the last time knows that nobody else held the lock between, so no
/// command created or moved a name meanwhile. Both are only compared
/// between live processes, so they are never fsynced.
package final class SerialLock {
    let file: FileDescriptor
    /// The count as this holder found it, and as it left it.
    package let found: UInt64
    package let left: UInt64
    /// The random stamp the last holder left after the count (bytes 8–15),
    /// nil when the file had none (new, truncated, replaced, an older
    /// courier's); and this holder's. A count alone starts again at 0 in a
    /// new or truncated file, and could climb back to the one a session
    /// left while others held the lock; a stamp never comes back.
    package let foundStamp: UInt64?
    package let leftStamp: UInt64
    /// How many of its session's holds so far found a stamp the session
    /// had not left (another process held the lock between), this one
    /// included: what the session learnt of the state folders under a hold
    /// of an earlier epoch may be stale (`SpoolSession.serialLock`).
    package internal(set) var epoch: UInt64 = 0

    init(holding file: FileDescriptor) throws(SystemError) {
        self.file = file
        let bytes = try file.read(from: 0, upTo: 16)
        found = bytes.count >= 8 ? Self.number(bytes[0..<8]) : 0
        foundStamp = bytes.count == 16 ? Self.number(bytes[8..<16]) : nil
        left = found &+ 1
        var stamp = UInt64.random(in: 1...UInt64.max)
        if stamp == foundStamp { stamp = stamp == UInt64.max ? 1 : stamp + 1 }
        leftStamp = stamp
        try file.write(Self.bytes(left) + Self.bytes(leftStamp), at: 0)
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func bytes(_ number: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: number >> (8 * UInt64($0))) }
    }
}
