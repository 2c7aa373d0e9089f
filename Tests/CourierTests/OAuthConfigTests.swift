import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierSupport

/// The `oauth-*` keys, the client secret, and the warning before a static
/// JWT in a `token-file` expires.
@Suite struct OAuthConfigTests {
    static func parse(_ text: String) throws(ConfigError) -> Configuration {
        try Configuration.parse(Array(text.utf8), file: "/etc/courier/courier.conf")
    }

    @Test("oauth-* keys give a subscriber and a catalog a client-credentials client")
    func keysAreParsed() throws {
        let configuration = try Self.parse(
            """
            [subscriber alpha]
            url = https://hooks.example.org/courier
            oauth-token-url = https://auth.example.org/token
            oauth-client-id = s6BhdRkqt3
            oauth-client-secret-file = alpha.secret
            oauth-scope = records:write devices

            [catalog products]
            url = https://api.example.org/catalogs/products
            oauth-token-url = https://auth.example.org/token
            oauth-client-id = catalog-reader
            oauth-client-secret-file = /etc/courier/catalog.secret
            """)
        let alpha = try #require(configuration.subscribers.first?.oauth)
        #expect(alpha.tokenURL == "https://auth.example.org/token")
        #expect(alpha.clientID == "s6BhdRkqt3")
        #expect(alpha.scope == "records:write devices")
        #expect(alpha.secretFile == "/etc/courier/alpha.secret")
        #expect(alpha.secret == nil, "secrets are read only when asked for")
        let products = try #require(configuration.catalogs.first?.oauth)
        #expect(products.clientID == "catalog-reader")
        #expect(products.scope == nil)
    }

    @Test(
        "an OAuth client is refused without its URL, id or secret file, beside a token-file or an Authorization line",
        arguments: [
            ("oauth-token-url = https://a.example/t\noauth-client-id = c", "has no oauth-client-secret-file"),
            ("oauth-client-id = c\noauth-client-secret-file = s", "has no oauth-token-url"),
            ("oauth-token-url = https://a.example/t\noauth-client-secret-file = s", "has no oauth-client-id"),
            (
                "token-file = t\noauth-token-url = https://a.example/t\noauth-client-id = c\noauth-client-secret-file = s",
                "a static token-file and oauth-* keys"
            ),
            (
                "header = Authorization: Basic x\noauth-token-url = https://a.example/t\noauth-client-id = c\n"
                    + "oauth-client-secret-file = s",
                "Authorization is given both by oauth-* keys and by a header line"
            ),
            ("oauth-token-url = ftp://a.example/t", "must be an http:// or https:// URL"),
            ("oauth-scope = a  b", "scope tokens separated by single spaces"),
            ("oauth-scope = \"quoted\"", "scope tokens"),
            ("oauth-client-id = caf\u{E9}", "printable ASCII"),
            ("oauth-client-id = c\noauth-client-id = d", "given twice"),
        ])
    func incompleteClientsAreRefused(keys: String, reason: String) {
        let text = "[subscriber alpha]\nurl = https://hooks.example.org/x\n" + keys + "\n"
        #expect {
            _ = try Self.parse(text)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test("the client secret is read with the other secrets, and it and its Basic credentials are redacted")
    func theSecretIsLoadedAndRedacted() throws {
        let directory = TemporaryDirectory("oauth-config")
        try directory.write("7Fjfp0ZBr1KtDRbnfVdmIw\n", to: "alpha.secret")
        try directory.write(
            """
            [subscriber alpha]
            url = http://127.0.0.1:9/x
            oauth-token-url = http://127.0.0.1:9/token
            oauth-client-id = s6BhdRkqt3
            oauth-client-secret-file = alpha.secret
            """, to: "courier.conf")
        let configuration = try Configuration.load(file: directory.path + "/courier.conf", readingSecrets: true)
        let client = try #require(configuration.subscribers.first?.oauth)
        #expect(client.secret == "7Fjfp0ZBr1KtDRbnfVdmIw")
        // RFC 6749 §2.3.1's own example header, not one made by courier's code.
        #expect(client.basicCredentials == "czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3")
        let redacted = configuration.redactor.redact(
            "echo: 7Fjfp0ZBr1KtDRbnfVdmIw and Basic czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3")
        #expect(redacted == "echo: [redacted] and Basic [redacted]")
    }

    @Test("client id and secret are form-encoded before they become Basic credentials (RFC 6749 §2.3.1)")
    func basicCredentialsAreFormEncodedFirst() {
        let client = OAuthClient(tokenURL: "http://127.0.0.1:9/t", clientID: "my app", secret: "p:ss%/é")
        // base64("my+app:p%3Ass%25%2F%C3%A9"), as Python's quote_plus and b64encode give it.
        #expect(client.basicCredentials == "bXkrYXBwOnAlM0FzcyUyNSUyRiVDMyVBOQ==")
    }

    @Test("a secret file that is empty or not printable ASCII is refused at load", arguments: ["", "tab\there"])
    func badSecretsAreRefused(_ secret: String) throws {
        let directory = TemporaryDirectory("oauth-config")
        try directory.write(secret, to: "alpha.secret")
        try directory.write(
            """
            [catalog products]
            url = http://127.0.0.1:9/c
            oauth-token-url = http://127.0.0.1:9/token
            oauth-client-id = reader
            oauth-client-secret-file = alpha.secret
            """, to: "courier.conf")
        #expect {
            _ = try Configuration.load(file: directory.path + "/courier.conf", readingSecrets: true)
        } throws: { error in
            "\(error)".contains("oauth-client-secret-file: unable to use")
        }
    }

    @Test("a client secret file readable by others is worth a warning")
    func worldReadableSecretsAreWarnedAbout() throws {
        let directory = TemporaryDirectory("oauth-config")
        try directory.write("secret-value", to: "alpha.secret")
        chmod(directory.path + "/alpha.secret", 0o644)
        try directory.write(
            """
            [subscriber alpha]
            url = http://127.0.0.1:9/x
            oauth-token-url = http://127.0.0.1:9/token
            oauth-client-id = c
            oauth-client-secret-file = alpha.secret
            """, to: "courier.conf")
        let configuration = try Configuration.load(file: directory.path + "/courier.conf", readingSecrets: true)
        #expect(configuration.secretFileWarnings().contains { $0.contains("oauth-client-secret-file") })
    }
}

/// JWT expiry: the `exp` claim of a token courier sends but does not trust.
@Suite struct JSONWebTokenTests {
    /// RFC 7519 §3.1's example JWT: `exp` is 1300819380 (2011-03-22T18:43:00Z).
    static let rfcExample =
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

    /// A JWT with these claims, signature left as is: courier does not check it.
    static func token(claims: String) -> String {
        JSONWebToken.base64URLEncode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "."
            + JSONWebToken.base64URLEncode(Array(claims.utf8)) + ".c2lnbmF0dXJl"
    }

    @Test("the RFC 7519 example's exp is read from its middle segment")
    func theRFCExampleIsRead() {
        #expect(JSONWebToken.expiry(of: Self.rfcExample) == Timestamp(secondsSinceEpoch: 1_300_819_380))
    }

    @Test(
        "a token that is not a JWT with a numeric exp is not checked",
        arguments: [
            "2YotnFZFEjr1zCsicMWpAA", "a.b.c", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
            "eyJhbGciOiJub25lIn0.eyJleHAiOiIxMzAwODE5MzgwIn0.x", "eyJhbGciOiJub25lIn0.eyJleHAiOnRydWV9.x",
            "eyJhbGciOiJub25lIn0.eyJleHAiOjEzMDA4MTkzODB9", "eyJhbGciOiJub25lIn0.eyJleHAiOjEzMDA4MTkzODB9.x.y.z",
            "e30.W10.x",
        ])
    func otherTokensAreNotChecked(_ token: String) {
        #expect(JSONWebToken.expiry(of: token) == nil)
    }

    @Test("a fractional exp is a NumericDate too")
    func fractionalExpiry() {
        let token = Self.token(claims: #"{"exp":1300819380.5}"#)
        #expect(JSONWebToken.expiry(of: token) == Timestamp(nanosecondsSinceEpoch: 1_300_819_380_500_000_000))
    }

    @Test("a token-file whose JWT expires within a week, or has expired, is warned about; others are not")
    func expiringTokenFilesAreWarnedAbout() throws {
        let directory = TemporaryDirectory("jwt")
        let now = Timestamp(secondsSinceEpoch: 1_900_000_000)
        let soon = now.secondsSinceEpoch + 3 * 86_400 + 60
        let later = now.secondsSinceEpoch + 30 * 86_400
        try directory.write(Self.token(claims: #"{"sub":"a","exp":\#(soon)}"#), to: "soon.token")
        try directory.write(Self.token(claims: #"{"exp":\#(later)}"#), to: "later.token")
        try directory.write(Self.rfcExample, to: "expired.token")
        try directory.write("2YotnFZFEjr1zCsicMWpAA", to: "opaque.token")
        try directory.write(
            """
            [subscriber soon]
            url = http://127.0.0.1:9/x
            token-file = soon.token
            [subscriber later]
            url = http://127.0.0.1:9/x
            token-file = later.token
            [subscriber opaque]
            url = http://127.0.0.1:9/x
            token-file = opaque.token
            [catalog old]
            url = http://127.0.0.1:9/c
            token-file = expired.token
            """, to: "courier.conf")
        let configuration = try Configuration.load(file: directory.path + "/courier.conf", readingSecrets: false)
        let warnings = configuration.tokenExpiryWarnings(now: now).map(\.description)
        #expect(warnings.count == 2)
        #expect(
            warnings.contains {
                $0.hasPrefix("[subscriber soon] token-file \(directory.path)/soon.token: the JWT in it expires at ")
                    && $0.contains("(in 3 days)")
            })
        #expect(
            warnings.contains {
                $0.hasPrefix("[catalog old] token-file") && $0.contains("expired at 2011-03-22T18:43:00")
            })
    }
}
