import CourierPosix
import CourierSupport
import Foundation

/// Whose token it is: a subscriber's or a catalog's (their names are apart,
/// so a subscriber and a catalog may share one).
package enum OAuthOwner: Hashable, Sendable, CustomStringConvertible {
    case subscriber(String)
    case catalog(String)

    package var description: String {
        switch self {
        case .subscriber(let name): return "subscriber \(name)"
        case .catalog(let name): return "catalog \(name)"
        }
    }

    /// The token cache in `.courier/`.
    package var cacheFile: String {
        switch self {
        case .subscriber(let name): return "oauth-subscriber-\(name).json"
        case .catalog(let name): return "oauth-catalog-\(name).json"
        }
    }
}

/// Why no token could be had: the token endpoint (its URL shown without
/// credentials) and what went wrong. The subscriber or catalog is named by
/// whoever reports it.
package struct OAuthError: Error, Sendable, CustomStringConvertible {
    package let url: String
    package let reason: String

    package init(url: String, reason: String) {
        self.url = url
        self.reason = reason
    }

    package var description: String { "no OAuth token from \(Redactor.displayURL(url)): \(reason)" }
}

/// An access token from a client-credentials grant, and when it stops
/// being worth sending.
package struct OAuthToken: Sendable, Equatable {
    package let value: String
    package let obtained: Timestamp
    package let expires: Timestamp

    /// RFC 6749 makes `expires_in` only RECOMMENDED; without it (and without
    /// a JWT `exp` in the token) an hour is assumed, the RFC's own example.
    /// A token refused earlier is fetched anew on the 401 anyway.
    static let assumedLifetime: Duration = .seconds(3600)
    /// The longest lifetime believed: a day. A server's `expires_in` of a
    /// year would keep a token long after its client was rotated.
    static let longestLifetime: Duration = .seconds(86_400)
    /// Tokens longer than this are refused: no real one comes near, and the
    /// ledger reads this far past its 200-byte cut so that an echoed token
    /// is redacted whole.
    package static let longest = 16 * 1024

    package init(value: String, obtained: Timestamp, expires: Timestamp) {
        self.value = value
        self.obtained = obtained
        self.expires = expires
    }

    /// When a new token is fetched instead: a minute before it expires, or
    /// a tenth of its lifetime before when that is shorter, so a request
    /// never leaves with a token about to run out on the way.
    package var renewal: Timestamp {
        let lifetime = expires - obtained
        return expires - min(.seconds(60), lifetime / 10)
    }

    package func isFresh(at now: Timestamp) -> Bool { now < renewal }

    /// An RFC 6749 §5.1 answer: a JSON object with `access_token`,
    /// `token_type` (`Bearer`, any case: §7.1, a client must not use a
    /// type it does not know) and, usually, `expires_in` seconds.
    package static func parse(_ answer: [UInt8], obtained: Timestamp) -> Result<OAuthToken, ParseFailure> {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(answer))) as? [String: Any] else {
            return .failure(ParseFailure("the answer is not a JSON object"))
        }
        guard let value = object["access_token"] as? String, !value.isEmpty else {
            return .failure(ParseFailure("the answer has no access_token"))
        }
        guard value.utf8.count <= longest, value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return .failure(ParseFailure("the access_token is not one word of printable ASCII within 16 KiB"))
        }
        guard let type = object["token_type"] as? String else {
            return .failure(ParseFailure("the answer has no token_type"))
        }
        guard type.lowercased() == "bearer" else {
            return .failure(ParseFailure("token_type \(type.prefix(40)) is not Bearer"))
        }
        var lifetime = assumedLifetime
        if let given = object["expires_in"] {
            // A number, as RFC 6749 has it; some servers send it as a string.
            guard !(given is Bool), let seconds = (given as? Double) ?? (given as? String).flatMap(Double.init),
                seconds.isFinite, seconds > 0
            else { return .failure(ParseFailure("expires_in is not a positive number of seconds")) }
            lifetime = .milliseconds(Int64(min(seconds, 86_400) * 1000))
        } else if let expiry = JSONWebToken.expiry(of: value), expiry > obtained {
            lifetime = expiry - obtained
        }
        return .success(
            OAuthToken(value: value, obtained: obtained, expires: obtained + min(lifetime, longestLifetime)))
    }

    package struct ParseFailure: Error, Equatable, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }
}
