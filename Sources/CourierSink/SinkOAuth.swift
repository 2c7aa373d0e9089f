import CourierPosix
import CourierRecords
import CourierSupport
import Foundation

/// `courier sink --oauth CLIENT_ID:SECRET_FILE`: the sink as an OAuth 2.0
/// authorization server for one client, and a resource server that wants
/// its tokens. `POST /oauth/token` issues tokens by the client-credentials
/// grant (RFC 6749 §4.4), the client authenticated by HTTP Basic (§2.3.1)
/// or by `client_id` and `client_secret` in the form body; every other
/// request needs `Authorization: Bearer` with an issued token that has not
/// expired (RFC 6750), else 401.
///
/// The tokens are JWT-shaped (HS256 under a key made at start), so they
/// need no table, carry an `exp` courier can read, and die with the
/// process: a restarted sink refuses the tokens of the last one, which is
/// how the tests make a server revoke a token.
package struct SinkOAuth: Sendable {
    package let clientID: String
    let secret: String
    package let lifetime: Duration
    private let key: [UInt8]

    package static let defaultLifetime: Duration = .seconds(3600)
    static let realm = "courier sink"

    package init(clientID: String, secret: String, lifetime: Duration = defaultLifetime) {
        self.clientID = clientID
        self.secret = secret
        self.lifetime = lifetime
        // SystemRandomNumberGenerator reads getrandom(2): a key fit for a MAC.
        var generator = SystemRandomNumberGenerator()
        key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func json(_ status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        var response = HTTPResponse.json(status, text)
        // RFC 6749 §5.1 and §5.2: token answers are never cached.
        response.headers += [("Cache-Control", "no-store"), ("Pragma", "no-cache")] + headers
        return response
    }

    /// `POST /oauth/token`: a token, or an RFC 6749 §5.2 error.
    func issue(_ request: HTTPRequest) -> HTTPResponse {
        func error(_ status: Int, _ code: String, _ description: String) -> HTTPResponse {
            Self.json(status, #"{"error":"\#(code)","error_description":"\#(description)"}"#)
        }
        guard request.header("content-type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true,
            let text = String(validating: request.body, as: UTF8.self), let form = FormEncoding.decode(text)
        else { return error(400, "invalid_request", "expected an application/x-www-form-urlencoded body") }
        var parameters: [String: String] = [:]
        for (name, value) in form {
            // §3.2: no parameter may be given twice.
            guard parameters.updateValue(value, forKey: name) == nil else {
                return error(400, "invalid_request", "a parameter is given twice")
            }
        }
        switch authenticate(request, parameters) {
        case .refused(let response): return response
        case .client: break
        }
        guard let grant = parameters["grant_type"] else { return error(400, "invalid_request", "no grant_type") }
        guard grant == "client_credentials" else {
            return error(400, "unsupported_grant_type", "only client_credentials is served")
        }
        let token = mint(now: .now())
        var answer = #"{"access_token":"\#(token)","token_type":"Bearer","expires_in":\#(lifetime.components.seconds)"#
        if let scope = parameters["scope"] {
            answer += #","scope":"# + String(decoding: JSONValidator.encodeString(scope), as: UTF8.self)
        }
        return Self.json(200, answer + "}")
    }

    private enum Authentication {
        case client
        case refused(HTTPResponse)
    }

    /// §2.3.1: Basic (id and secret form-encoded before base64), or the
    /// body's `client_id` and `client_secret`; never both (§2.3).
    private func authenticate(_ request: HTTPRequest, _ parameters: [String: String]) -> Authentication {
        let basic = request.header("authorization").flatMap { value -> String? in
            let parts = value.split(separator: " ", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "basic" ? String(parts[1]) : nil
        }
        let inBody = parameters["client_id"] != nil || parameters["client_secret"] != nil
        if basic != nil && inBody {
            return .refused(
                Self.json(
                    400, #"{"error":"invalid_request","error_description":"more than one client authentication"}"#))
        }
        var offered: (id: String, secret: String)?
        if let basic {
            if let decoded = Data(base64Encoded: basic).flatMap({ String(data: $0, encoding: .utf8) }),
                let colon = decoded.firstIndex(of: ":"),
                let id = FormEncoding.decode("a=" + decoded[..<colon])?.first?.value,
                let secret = FormEncoding.decode("a=" + decoded[decoded.index(after: colon)...])?.first?.value
            {
                offered = (id, secret)
            }
        } else if let id = parameters["client_id"], let secret = parameters["client_secret"] {
            offered = (id, secret)
        }
        guard let offered, offered.id == clientID,
            Digest.equalInConstantTime(Array(offered.secret.utf8), Array(secret.utf8))
        else {
            // §5.2: a client that tried Basic is told how to authenticate.
            let challenge = basic != nil ? [("WWW-Authenticate", #"Basic realm="\#(Self.realm)""#)] : []
            return .refused(
                Self.json(
                    401, #"{"error":"invalid_client","error_description":"client authentication failed"}"#,
                    headers: challenge))
        }
        return .client
    }

    /// `HEADER.CLAIMS.SIGNATURE`, base64url, HS256 over the first two.
    func mint(now: Timestamp) -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        let claims =
            #"{"sub":"# + String(decoding: JSONValidator.encodeString(clientID), as: UTF8.self)
            + #","iat":\#(now.secondsSinceEpoch),"exp":\#((now + lifetime).secondsSinceEpoch),"jti":"\#(id)"}"#
        let signed =
            JSONWebToken.base64URLEncode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "."
            + JSONWebToken.base64URLEncode(Array(claims.utf8))
        return signed + "."
            + JSONWebToken.base64URLEncode(Digest.hmacSHA256(key: key, message: Array(signed.utf8)) ?? [])
    }

    /// Nil when the request carries a token this sink issued and it has
    /// not expired; else the RFC 6750 §3 answer.
    func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        guard let value = request.header("authorization") else {
            // §3.1: a request with no credentials gets no error code.
            return Self.json(
                401, #"{"error":"invalid_request","error_description":"send Authorization: Bearer TOKEN"}"#,
                headers: [("WWW-Authenticate", #"Bearer realm="\#(Self.realm)""#)])
        }
        let parts = value.split(separator: " ", maxSplits: 1)
        let token = parts.count == 2 && parts[0].lowercased() == "bearer" ? String(parts[1]) : ""
        guard let problem = check(token, now: .now()) else { return nil }
        return Self.json(
            401, #"{"error":"invalid_token","error_description":"\#(problem)"}"#,
            headers: [("WWW-Authenticate", #"Bearer realm="\#(Self.realm)", error="invalid_token""#)])
    }

    /// Why `token` is no good, or nil.
    func check(_ token: String, now: Timestamp) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = JSONWebToken.base64URLDecode(parts[2]),
            let expected = Digest.hmacSHA256(key: key, message: Array("\(parts[0]).\(parts[1])".utf8)),
            Digest.equalInConstantTime(signature, expected)
        else { return "the token was not issued by this sink" }
        guard let expires = JSONWebToken.expiry(of: token), now < expires else { return "the token has expired" }
        return nil
    }
}
