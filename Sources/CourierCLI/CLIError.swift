import CourierConfig
import CourierOperations
import CourierRound
import CourierSpool

/// sysexits.h codes, the only exit statuses courier uses.
public enum ExitStatus: Int32, Sendable {
    case ok = 0
    case usage = 64
    case dataError = 65
    case software = 70
    case ioError = 74
    case temporary = 75
    case config = 78
}

/// Every way a command can fail, funnelled into one message shape and one
/// exit status: `courier: fatal: …`.
enum CLIError: Error {
    case usage(String)
    case config(ConfigError)
    case spool(SpoolError)
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
        case .spool(let error): return error.isTemporary ? .temporary : .ioError
        case .round(let error): return error.isTemporary ? .temporary : .ioError
        case .operation(.spool(let error)): return error.isTemporary ? .temporary : .ioError
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
        case .spool(let error): return error.description
        case .round(let error): return error.description
        case .operation(let error): return error.description
        case .data(let text), .io(let text): return text
        case .reported: return nil
        }
    }
}
