import CourierConfig
import CourierOperations
import CourierRound
import CourierSpool
import Glibc

/// sysexits.h codes, the only exit statuses courier uses.
package enum ExitStatus: Int32, Sendable {
    case ok = 0
    case usage = 64
    case dataError = 65
    /// An input file (`enqueue FILE`) that does not exist or cannot be read.
    case noInput = 66
    case software = 70
    /// Where a record was to go, it cannot be created (`enqueue` into a
    /// spool that is not there, or on a read-only file system).
    case cannotCreate = 73
    case ioError = 74
    case temporary = 75
    /// The user may not (EACCES, EPERM): not the spool's owner, not in its
    /// producers group.
    case noPermission = 77
    case config = 78

    /// A spool fault as a script can act on it: try again later (75), fix
    /// who runs it (77), or look at the spool (74).
    init(_ error: SpoolError) {
        if error.isTemporary {
            self = .temporary
        } else if error.isPermissionDenied {
            self = .noPermission
        } else {
            self = .ioError
        }
    }

    /// The same for a record `enqueue` could not drop: what is neither
    /// temporary nor a permission is that the file cannot be created there
    /// (no such spool, a read-only file system, a name in the way).
    init(enqueueing error: SpoolError) {
        let cannotCreate: Set<Int32> = [ENOENT, ENOTDIR, EROFS, EEXIST, ELOOP, EISDIR]
        if case .notASpool = error, !error.isPermissionDenied, !error.isTemporary {
            self = .cannotCreate
        } else if cannotCreate.contains(error.errno.code) {
            self = .cannotCreate
        } else {
            self.init(error)
        }
    }
}

/// Every way a command can fail, funnelled into one message shape and one
/// exit status: `courier: fatal: …`.
enum CLIError: Error {
    case usage(String)
    case config(ConfigError)
    case spool(SpoolError)
    /// The spool `enqueue` was to drop into cannot take records.
    case enqueue(SpoolError)
    case round(RoundError)
    case operation(OperationError)
    case data(String)
    case io(String)
    /// Reported already (e.g. per-file enqueue errors); only the status is left.
    case reported(ExitStatus)

    var status: ExitStatus {
        switch self {
        case .usage: return .usage
        case .config: return .config
        case .spool(let error): return ExitStatus(error)
        case .enqueue(let error): return ExitStatus(enqueueing: error)
        case .round(.spool(let error)): return ExitStatus(error)
        case .round(let error): return error.isTemporary ? .temporary : .ioError
        case .operation(.spool(let error)): return ExitStatus(error)
        case .operation: return .dataError
        case .data: return .dataError
        case .io: return .ioError
        case .reported(let status): return status
        }
    }

    var message: String? {
        switch self {
        case .usage(let text): return "usage: \(text) (see `courier help`)"
        case .config(let error): return error.description
        case .spool(let error), .enqueue(let error): return error.description
        case .round(let error): return error.description
        case .operation(let error): return error.description
        case .data(let text), .io(let text): return text
        case .reported: return nil
        }
    }
}
