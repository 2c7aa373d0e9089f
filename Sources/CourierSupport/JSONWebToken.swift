import CourierPosix
import Foundation

/// What courier reads of a JSON Web Token (RFC 7519): its `exp` claim, to
/// warn before a static token runs out. The signature is not checked: the
/// token is ours to send, not to trust, and only its issuer has the key.
package enum JSONWebToken {
    /// When the token expires, if it is a JWT in the JWS compact form
    /// (three base64url parts, the first two JSON objects) with a numeric
    /// `exp`; nil for anything else, which is then simply not checked.
    package static func expiry(of token: String) -> Timestamp? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = base64URLDecode(parts[0]), let payload = base64URLDecode(parts[1]),
            (try? JSONSerialization.jsonObject(with: Data(header))) is [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any],
            !(claims["exp"] is Bool), let seconds = claims["exp"] as? Double
        else { return nil }
        // A NumericDate is seconds since 1970, possibly with a fraction
        // (RFC 7519 §2); one past what a Timestamp holds (2262) is never
        // worth a warning, and neither is one before 1970.
        guard seconds.isFinite, seconds >= 0, seconds < 9_000_000_000 else { return nil }
        return Timestamp(nanosecondsSinceEpoch: Int64(seconds * 1_000_000_000))
    }

    /// base64url without padding (RFC 7515 §2); nil for any other byte.
    package static func base64URLDecode(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty,
            text.utf8.allSatisfy({ isBase64URL($0) })
        else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    package static func base64URLEncode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
