import CourierSupport
import Foundation

/// `oauth-token-url`, `oauth-client-id`, `oauth-client-secret-file` and
/// `oauth-scope` of a subscriber or catalog: an OAuth 2.0 client that gets
/// its bearer tokens with the client-credentials grant (RFC 6749 §4.4).
package struct OAuthClient: Sendable, Equatable {
    package let tokenURL: String
    package let clientID: String
    /// Space-separated scope tokens; nil: the server's default scope.
    package let scope: String?
    package let secretFile: String?
    /// The client secret, read from `secretFile` when secrets are loaded.
    package internal(set) var secret: String?
    /// Where `oauth-client-secret-file` was given, for errors.
    var secretFileLine = 0

    /// A client built in code (tests), its secret given directly.
    package init(tokenURL: String, clientID: String, secret: String, scope: String? = nil) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.scope = scope
        self.secretFile = nil
        self.secret = secret
    }

    init(tokenURL: String, clientID: String, scope: String?, secretFile: String, secretFileLine: Int) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.scope = scope
        self.secretFile = secretFile
        self.secret = nil
        self.secretFileLine = secretFileLine
    }

    /// The HTTP Basic credentials of RFC 6749 §2.3.1: id and secret are
    /// form-encoded first, then joined with `:` and base64-encoded. Nil
    /// until the secret is loaded.
    package var basicCredentials: String? {
        guard let secret else { return nil }
        let pair = FormEncoding.encode(clientID) + ":" + FormEncoding.encode(secret)
        return Data(pair.utf8).base64EncodedString()
    }

    /// RFC 6749 §A.1–A.2: a client id or secret is VSCHAR, printable
    /// ASCII with spaces.
    static func isVisible(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// RFC 6749 §3.3: scope tokens of NQCHAR (printable ASCII but space,
    /// `"` and `\`) separated by single spaces.
    static func isScope(_ text: String) -> Bool {
        let tokens = text.split(separator: " ", omittingEmptySubsequences: false)
        return tokens.allSatisfy { token in
            !token.isEmpty
                && token.utf8.allSatisfy {
                    (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\")
                }
        }
    }
}

/// Collects the `oauth-*` keys of one section; shared by subscribers and
/// catalogs, which take them alike.
struct OAuthKeys {
    var tokenURL: String?
    var clientID: String?
    var secretFile: String?
    var scope: String?
    var lines: [String: Int] = [:]

    var isEmpty: Bool { lines.isEmpty }

    mutating func set(_ entry: IniEntry, base: String, fail: (String) -> ConfigError) throws(ConfigError) {
        let value = entry.value
        lines[entry.key] = entry.line
        switch entry.key {
        case "oauth-token-url":
            tokenURL = try httpURL(value, fail)
        case "oauth-client-id":
            guard OAuthClient.isVisible(value) else { throw fail("must be printable ASCII (RFC 6749 §A.1)") }
            clientID = value
        case "oauth-client-secret-file":
            guard !value.isEmpty else { throw fail("is empty") }
            secretFile = Configuration.resolve(value, against: base)
        case "oauth-scope":
            guard OAuthClient.isScope(value) else {
                throw fail("must be scope tokens separated by single spaces, without `\"` or `\\` (RFC 6749 §3.3)")
            }
            scope = value
        default:
            throw fail("unknown key")
        }
    }

    /// The client, when any `oauth-*` key was given: then the URL, the id
    /// and the secret file are all required.
    func build(file: String, section: String) throws(ConfigError) -> OAuthClient? {
        guard !isEmpty else { return nil }
        guard let tokenURL else { throw .missing(file: file, section: section, key: "oauth-token-url") }
        guard let clientID else { throw .missing(file: file, section: section, key: "oauth-client-id") }
        guard let secretFile else { throw .missing(file: file, section: section, key: "oauth-client-secret-file") }
        return OAuthClient(
            tokenURL: tokenURL, clientID: clientID, scope: scope, secretFile: secretFile,
            secretFileLine: lines["oauth-client-secret-file"] ?? 0)
    }

    /// OAuth sends its own `Authorization`: a token file or a header line
    /// beside it would be a second answer to the same question.
    func refuseBeside(tokenFile: String?, headers: [HTTPHeaderField], file: String, section: String, line: Int)
        throws(ConfigError)
    {
        guard !isEmpty else { return }
        let oauthLine = lines.values.min() ?? line
        if tokenFile != nil {
            throw .invalid(
                file: file, line: oauthLine, section: section, key: "token-file",
                reason: "a static token-file and oauth-* keys cannot both give the Authorization header")
        }
        if headers.contains(where: { $0.name.lowercased() == "authorization" }) {
            throw .invalid(
                file: file, line: oauthLine, section: section, key: "header",
                reason: "Authorization is given both by oauth-* keys and by a header line")
        }
    }
}
