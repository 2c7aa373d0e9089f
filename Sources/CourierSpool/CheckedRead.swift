import CourierPosix
import Glibc

/// What reading a file a script could have put in the spool came to.
package enum CheckedRead: Sendable {
    /// The file's whole bytes.
    case read([UInt8])
    /// It is not something courier will send; the reason is for the ledger.
    case refused(String)
    /// It went away (a person moved it) between listing and reading.
    case vanished
}

extension Spool {
    /// The words for a file over the limit; the record parser says the same
    /// (`RecordProblem.tooLarge`, a layer apart: `RecordTests` holds them equal).
    package static func tooLarge(_ size: Int, limit: Int) -> String {
        "record is \(size) bytes, more than max-record-size (\(limit))"
    }

    /// The checks every file gets before its bytes are used, whether it
    /// was dropped under any name or under an entry's: opened without
    /// following links or blocking on FIFOs, a regular file by `fstat` of
    /// what was opened (a name swapped since it was listed is caught), one
    /// link (a hard link would turn any file courier can read into an
    /// entry), within `limit` bytes, and read whole.
    /// Throws only for the process's own limits (`Errno.isOwnLimit`): the file
    /// is not at fault, and stays where it is.
    package func readChecked(_ name: FileName, in state: SpoolState, limit: Int) throws(SpoolError) -> CheckedRead {
        try openChecked(name, in: directory(state), limit: limit).read
    }

    /// `readChecked` in any folder of the spool (another worker's
    /// `sending/WORKER/`).
    package func readChecked(_ name: FileName, in folder: DirectoryHandle, limit: Int) throws(SpoolError)
        -> CheckedRead
    {
        try openChecked(name, in: folder, limit: limit).read
    }

    /// `readChecked`, keeping the file open for a caller that must fsync it.
    /// `links`: more than one only to read a file known to have its other
    /// name in a state folder (`SpoolSession.resolveHalfIntake`).
    /// `opened`: the file's status as it was opened, just before its bytes
    /// were read (the one fstat a checked read costs).
    package func openChecked(_ name: FileName, in state: SpoolState, limit: Int, links: Int = 1) throws(SpoolError)
        -> (read: CheckedRead, file: FileDescriptor?, opened: FileStatus?)
    {
        try openChecked(name, in: directory(state), limit: limit, links: links)
    }

    private func openChecked(_ name: FileName, in folder: DirectoryHandle, limit: Int, links: Int = 1)
        throws(SpoolError) -> (read: CheckedRead, file: FileDescriptor?, opened: FileStatus?)
    {
        do {
            let file = try folder.openFile(name, flags: O_RDONLY)
            let opened = try file.status()
            guard opened.kind == .regular else {
                return (.refused("not a regular file (\(opened.kind.words)); it was not followed or read"), nil, nil)
            }
            guard opened.links <= links else {
                return (.refused("has \(opened.links) hard links; courier takes only files with one name"), nil, nil)
            }
            guard opened.size <= limit else {
                return (.refused(Self.tooLarge(opened.size, limit: limit)), nil, nil)
            }
            let bytes = try file.read(upTo: limit + 1, size: opened.size)
            guard bytes.count <= limit else {
                return (.refused(Self.tooLarge(bytes.count, limit: limit)), nil, nil)
            }
            return (.read(bytes), file, opened)
        } catch let error where error.errno == .noSuchFile {
            return (.vanished, nil, nil)
        } catch let error where error.errno == Errno(ELOOP) {
            return (.refused("not a regular file (symbolic link); it was not followed or read"), nil, nil)
        } catch let error where error.errno.isOwnLimit {
            // Too many open files, or no memory: the process's limit, not
            // the file's fault. Refusing would flag good records.
            throw SpoolError(error)
        } catch {
            return (.refused("unreadable: \(error.errno)"), nil, nil)
        }
    }
}

extension FileStatus.Kind {
    /// The kind in the words a person reading the ledger would use.
    package var words: String {
        switch self {
        case .regular: return "regular file"
        case .directory: return "directory"
        case .symbolicLink: return "symbolic link"
        case .fifo: return "FIFO"
        case .socket: return "socket"
        case .characterDevice: return "character device"
        case .blockDevice: return "block device"
        case .unknown: return "unknown file type"
        }
    }
}
