import CourierSpool
import CourierTransport

/// Why a round stopped before it finished.
package enum RoundError: Error, Sendable, CustomStringConvertible {
    case spool(SpoolError)
    case curl(CurlError)

    package var description: String {
        switch self {
        case .spool(let error): return error.description
        case .curl(let error): return "libcurl: \(error)"
        }
    }

    package var isTemporary: Bool {
        switch self {
        case .spool(let error): return error.isTemporary
        case .curl: return true
        }
    }
}
