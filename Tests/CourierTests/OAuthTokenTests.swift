import Testing

@testable import CourierPosix
@testable import CourierTransport

/// The token answer of RFC 6749 §5.1, and when a token is renewed.
@Suite struct OAuthTokenTests {
    static let obtained = Timestamp(secondsSinceEpoch: 1_900_000_000)

    @Test("RFC 6749 §5.1's answer with token_type Bearer gives the token and an expiry expires_in from now")
    func theRFCAnswerParses() throws {
        let answer = """
            {
              "access_token":"2YotnFZFEjr1zCsicMWpAA",
              "token_type":"Bearer",
              "expires_in":3600,
              "refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA",
              "example_parameter":"example_value"
            }
            """
        let token = try OAuthToken.parse(Array(answer.utf8), obtained: Self.obtained).get()
        #expect(token.value == "2YotnFZFEjr1zCsicMWpAA")
        #expect(token.expires == Self.obtained + .seconds(3600))
    }

    @Test(
        "an answer courier cannot use is refused with a reason",
        arguments: [
            // The RFC's example itself: a client must not use a token type it does not know (§7.1).
            (#"{"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"example","expires_in":3600}"#, "not Bearer"),
            (#"{"token_type":"Bearer"}"#, "no access_token"),
            (#"{"access_token":"2YotnFZFEjr1zCsicMWpAA"}"#, "no token_type"),
            (#"{"access_token":"two words","token_type":"bearer"}"#, "printable ASCII"),
            (#"{"access_token":"t0k3n","token_type":"Bearer","expires_in":0}"#, "expires_in"),
            (#"{"access_token":"t0k3n","token_type":"Bearer","expires_in":true}"#, "expires_in"),
            ("[]", "not a JSON object"),
        ])
    func unusableAnswers(answer: String, reason: String) {
        guard case .failure(let failure) = OAuthToken.parse(Array(answer.utf8), obtained: Self.obtained) else {
            Issue.record("accepted \(answer)")
            return
        }
        #expect(failure.description.contains(reason))
    }

    @Test(
        "a token is renewed a minute before it expires, or a tenth of its lifetime before when that is shorter",
        arguments: [(3600, 3540), (86_400, 86_340), (300, 270), (10, 9)])
    func renewal(lifetime: Int64, renewedAfter: Int64) {
        let token = OAuthToken(
            value: "t", obtained: Self.obtained, expires: Self.obtained + .seconds(lifetime))
        #expect(token.renewal == Self.obtained + .seconds(renewedAfter))
        #expect(token.isFresh(at: Self.obtained + .seconds(renewedAfter) - .milliseconds(1)))
        #expect(!token.isFresh(at: Self.obtained + .seconds(renewedAfter)))
    }

    @Test("without expires_in a JWT's own exp is believed, else an hour")
    func lifetimeWithoutExpiresIn() throws {
        let jwt = JSONWebTokenTests.token(claims: #"{"exp":\#(Self.obtained.secondsSinceEpoch + 600)}"#)
        let fromJWT = try OAuthToken.parse(
            Array(#"{"access_token":"\#(jwt)","token_type":"Bearer"}"#.utf8), obtained: Self.obtained
        ).get()
        #expect(fromJWT.expires == Self.obtained + .seconds(600))
        let opaque = try OAuthToken.parse(
            Array(#"{"access_token":"opaque","token_type":"Bearer"}"#.utf8), obtained: Self.obtained
        ).get()
        #expect(opaque.expires == Self.obtained + .seconds(3600))
    }
}
