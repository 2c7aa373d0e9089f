import Glibc

/// Where a request's proxy comes from. libcurl looks for one in the
/// environment at every transfer: up to seven `getenv` calls, each a scan
/// of the whole environment, about 1.5 k instructions a request. A
/// process's environment does not change while courier runs, so a client
/// looks once (`ofProcess`), and where no proxy variable is set it tells
/// libcurl "no proxy" outright: what libcurl would have found, without
/// looking again.
package enum ProxyLookup: Sendable, Equatable {
    /// Some proxy variable is set: libcurl reads them at each transfer,
    /// as curl(1) describes under ENVIRONMENT.
    case environment
    /// None is set: every transfer connects directly.
    case none

    /// What libcurl reads for `http` and `https` URLs: `no_proxy`,
    /// `<scheme>_proxy` and `all_proxy`, lower and upper case. It ignores
    /// `HTTP_PROXY`; it counts here all the same, so that a doubt is left
    /// to libcurl's own lookup.
    static let variables = [
        "no_proxy", "NO_PROXY", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
    ]

    /// `.none` when each variable is unset or empty (libcurl treats an
    /// empty one as unset), else `.environment`.
    package static func of(_ variable: (String) -> String?) -> ProxyLookup {
        variables.contains { !(variable($0) ?? "").isEmpty } ? .environment : .none
    }

    /// The process's own environment, read now.
    package static func ofProcess() -> ProxyLookup {
        of { name in getenv(name).map { String(cString: $0) } }
    }
}
