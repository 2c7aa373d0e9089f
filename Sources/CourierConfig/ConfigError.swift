import CourierPosix

/// A refused configuration, always naming the file and, where there is
/// one, the line and the key.
package enum ConfigError: Error, Sendable, CustomStringConvertible {
    case notFound(searched: [String])
    case unreadable(file: String, Errno)
    case syntax(file: String, line: Int, reason: String)
    case invalid(file: String, line: Int, section: String, key: String, reason: String)
    case missing(file: String, section: String, key: String)
    case secret(file: String, line: Int, key: String, path: String, reason: String)
    case noSubscribers(file: String)

    package var description: String {
        switch self {
        case .notFound(let searched):
            return "no configuration found (looked for \(searched.joined(separator: ", "))); "
                + "give one with --config FILE or COURIER_CONFIG"
        case .unreadable(let file, let error):
            return "unable to read \(file): \(error)"
        case .syntax(let file, let line, let reason):
            return "\(file):\(line): \(reason)"
        case .invalid(let file, let line, let section, let key, let reason):
            return "\(file):\(line): [\(section)] \(key): \(reason)"
        case .missing(let file, let section, let key):
            return "\(file): [\(section)] has no \(key) (it is required)"
        case .secret(let file, let line, let key, let path, let reason):
            return "\(file):\(line): \(key): unable to use \(path): \(reason)"
        case .noSubscribers(let file):
            return "\(file): no [subscriber NAME] section: there is nowhere to deliver to"
        }
    }
}
