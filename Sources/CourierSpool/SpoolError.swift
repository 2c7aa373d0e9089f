import CourierPosix
import Glibc

/// Everything that can go wrong with the spool's files, with the file and
/// the operation named, so the message alone tells an operator what to do.
package enum SpoolError: Error, Sendable, CustomStringConvertible {
    case notASpool(path: String, missing: String, Errno)
    case operation(String, path: String, Errno)
    case rename(from: String, to: String, Errno)

    /// A failed call with the context the directory handle gave it: a
    /// rename stays a rename (its EXDEV advice included), anything else is
    /// an operation on one file.
    package init(_ error: SystemError) {
        if let destination = error.destination {
            self = .rename(from: error.path, to: destination, error.errno)
        } else {
            self = .operation(error.operation, path: error.path, error.errno)
        }
    }

    package var description: String {
        switch self {
        case .notASpool(let path, let missing, let error) where SpoolError.deniesPermission(error):
            // The spool is there, but not this user's: `courier init`
            // would fail the same way, so it is not the advice.
            let folder = missing == path ? path : path + "/" + missing
            return "unable to open \(folder): \(error): run courier as the spool's owner, or as a member "
                + "of its producers group for enqueue (`courier init --group`)"
        case .notASpool(let path, let missing, let error) where error == .noSuchFile:
            return "\(path) is not a courier spool: \(missing): \(error) (run `courier init`)"
        case .notASpool(let path, let missing, let error):
            return "\(path) is not a courier spool: \(missing): \(error)"
        case .operation(let what, let path, let error):
            return "unable to \(what) \(path): \(error)"
        case .rename(let from, let to, let error) where error == .crossDevice:
            return "unable to rename \(from) to \(to): the spool's folders are on different file systems; "
                + "keep the whole spool on one file system"
        case .rename(let from, let to, let error):
            return "unable to rename \(from) to \(to): \(error)"
        }
    }

    /// The errno behind the failure.
    package var errno: Errno {
        switch self {
        case .notASpool(_, _, let error), .operation(_, _, let error), .rename(_, _, let error): return error
        }
    }

    /// The user may not do this here (EACCES, EPERM): sysexits 77, which
    /// no retry and no `courier init` fixes.
    package var isPermissionDenied: Bool { Self.deniesPermission(errno) }

    static func deniesPermission(_ error: Errno) -> Bool { error == Errno(EACCES) || error == Errno(EPERM) }

    /// Worth trying again later (sysexits 75) rather than a setup fault.
    package var isTemporary: Bool {
        switch self {
        case .notASpool: return false
        case .operation(_, _, let error), .rename(_, _, let error):
            return [Errno.noSpace, Errno(5), Errno(11), Errno(122)].contains(error)
        }
    }
}
