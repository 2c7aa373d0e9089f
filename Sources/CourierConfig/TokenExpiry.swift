import CourierPosix
import CourierSupport

/// A static `token-file` holding a JWT that expires soon, or has: courier
/// would go on sending it, and every request would be refused.
package struct TokenExpiryWarning: Sendable, CustomStringConvertible {
    /// `subscriber alpha` or `catalog products`.
    package let section: String
    package let path: String
    package let expires: Timestamp
    package let now: Timestamp

    package var hasExpired: Bool { expires <= now }

    package var description: String {
        let when = expires.rfc3339
        if hasExpired {
            return "[\(section)] token-file \(path): the JWT in it expired at \(when) "
                + "(\(Self.roughly(now - expires)) ago); its requests will be refused: replace it"
        }
        return "[\(section)] token-file \(path): the JWT in it expires at \(when) "
            + "(in \(Self.roughly(expires - now))); replace it before then"
    }

    /// `3 days`, `5 hours`, `12 minutes`: a person's unit, rounded down.
    static func roughly(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        func unit(_ count: Int64, _ name: String) -> String { "\(count) \(name)\(count == 1 ? "" : "s")" }
        if seconds >= 86_400 { return unit(seconds / 86_400, "day") }
        if seconds >= 3600 { return unit(seconds / 3600, "hour") }
        return unit(max(0, seconds / 60), "minute")
    }
}

extension Configuration {
    /// A week's notice: long enough to get a new token through a change
    /// process, short enough not to nag about tokens that last a month.
    package static let tokenExpiryNotice: Duration = .seconds(7 * 86_400)

    /// The token files whose JWT expires within `tokenExpiryNotice` of
    /// `now`, or has expired. Tokens already loaded are used; otherwise
    /// the file is read, and one that cannot be read (status run by a
    /// person without the right) is passed over: `check` names that fault.
    /// A token that is not a JWT, or has no `exp`, is not checked.
    package func tokenExpiryWarnings(now: Timestamp = .now()) -> [TokenExpiryWarning] {
        var tokens: [(section: String, path: String?, token: String?)] = []
        for subscriber in subscribers {
            tokens.append(("subscriber \(subscriber.name)", subscriber.tokenFile, subscriber.token))
        }
        for catalog in catalogs { tokens.append(("catalog \(catalog.name)", catalog.tokenFile, catalog.token)) }
        var warnings: [TokenExpiryWarning] = []
        for (section, path, loaded) in tokens {
            guard let path else { continue }
            let token =
                loaded ?? (try? Self.readSecret(path, file: file ?? "configuration", line: 0, key: "token-file"))
            guard let token, let expires = JSONWebToken.expiry(of: token), expires - now < Self.tokenExpiryNotice
            else { continue }
            warnings.append(TokenExpiryWarning(section: section, path: path, expires: expires, now: now))
        }
        return warnings
    }
}
