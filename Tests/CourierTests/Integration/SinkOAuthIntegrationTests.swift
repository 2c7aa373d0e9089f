import Foundation
import Testing

@testable import CourierPosix
@testable import CourierSink
@testable import CourierSupport

/// `courier sink --oauth`: the token endpoint answers RFC 6749's example
/// requests as the RFC says a server must, and every other request needs
/// one of its tokens (RFC 6750). The requests here are the RFCs' own.
@Suite(.tags(.integration)) struct SinkOAuthTests {
    static let oauth = SinkOAuth(
        clientID: OAuthTestServer.clientID, secret: OAuthTestServer.clientSecret, lifetime: .seconds(3600))

    static func sink(_ directory: TemporaryDirectory, oauth: SinkOAuth = oauth) throws -> Sink {
        try Sink(directory: directory.path + "/sink", oauth: oauth)
    }

    static func send(_ sink: Sink, _ method: String, _ target: String, _ headers: [(String, String)], _ body: String)
        -> HTTPResponse
    {
        let request = HTTPRequest(
            method: method, target: target, headers: headers.map { (name: $0.0, value: $0.1) }, body: Array(body.utf8))
        guard case .respond(let response) = sink.handle(request) else { return HTTPResponse(status: 0) }
        return response
    }

    /// RFC 6749 §4.4.2's request, to the sink's token path.
    static func tokenRequest(
        _ sink: Sink, authorization: String? = OAuthTestServer.basicAuthorization,
        body: String = "grant_type=client_credentials"
    ) -> HTTPResponse {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let authorization { headers.append(("Authorization", authorization)) }
        return send(sink, "POST", "/oauth/token", headers, body)
    }

    static func object(_ response: HTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    static func header(_ response: HTTPResponse, _ name: String) -> String? {
        response.headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    @Test("RFC 6749 §4.4.2's request gets §4.4.3's answer: a Bearer token, expires_in, never cached")
    func theTokenEndpointAnswersTheRFCRequest() throws {
        let directory = TemporaryDirectory("sink-oauth")
        let sink = try Self.sink(directory)
        let response = Self.tokenRequest(sink)
        #expect(response.status == 200)
        #expect(Self.header(response, "Cache-Control") == "no-store")
        #expect(Self.header(response, "Pragma") == "no-cache")
        let answer = Self.object(response)
        #expect(answer["token_type"] as? String == "Bearer")
        #expect(answer["expires_in"] as? Int == 3600)
        let token = try #require(answer["access_token"] as? String)
        // JWT-shaped, with an exp an hour away.
        let expires = try #require(JSONWebToken.expiry(of: token))
        #expect(abs((expires - Timestamp.now()).components.seconds - 3600) <= 2)
    }

    @Test("the client may authenticate with client_id and client_secret in the body instead (RFC 6749 §2.3.1)")
    func theClientMayAuthenticateInTheBody() throws {
        let directory = TemporaryDirectory("sink-oauth")
        let sink = try Self.sink(directory)
        let response = Self.tokenRequest(
            sink, authorization: nil,
            body: "grant_type=client_credentials&client_id=s6BhdRkqt3&client_secret=7Fjfp0ZBr1KtDRbnfVdmIw&scope=a+b")
        #expect(response.status == 200)
        #expect(Self.object(response)["scope"] as? String == "a b")
    }

    @Test(
        "token requests the RFC refuses get its §5.2 errors",
        arguments: [
            // A wrong secret: invalid_client, 401, and a Basic challenge because Basic was tried.
            ("Basic czZCaGRSa3F0Mzp3cm9uZw==", "grant_type=client_credentials", 401, "invalid_client"),
            (nil, "grant_type=client_credentials", 401, "invalid_client"),
            (nil, "grant_type=client_credentials&client_id=s6BhdRkqt3&client_secret=wrong", 401, "invalid_client"),
            (
                OAuthTestServer.basicAuthorization, "grant_type=client_credentials&client_id=s6BhdRkqt3", 400,
                "invalid_request"
            ),
            (OAuthTestServer.basicAuthorization, "grant_type=password&username=johndoe", 400, "unsupported_grant_type"),
            (OAuthTestServer.basicAuthorization, "scope=x", 400, "invalid_request"),
            (
                OAuthTestServer.basicAuthorization, "grant_type=client_credentials&grant_type=client_credentials", 400,
                "invalid_request"
            ),
        ] as [(String?, String, Int, String)])
    func refusedTokenRequests(authorization: String?, body: String, status: Int, error: String) throws {
        let directory = TemporaryDirectory("sink-oauth")
        let sink = try Self.sink(directory)
        let response = Self.tokenRequest(sink, authorization: authorization, body: body)
        #expect(response.status == status)
        #expect(Self.object(response)["error"] as? String == error)
        #expect(Self.header(response, "Cache-Control") == "no-store")
        if authorization != nil && status == 401 {
            #expect(Self.header(response, "WWW-Authenticate") == #"Basic realm="courier sink""#)
        }
    }

    @Test("a token request that is not a form POST is refused")
    func onlyFormPosts() throws {
        let directory = TemporaryDirectory("sink-oauth")
        let sink = try Self.sink(directory)
        let json = Self.send(
            sink, "POST", "/oauth/token",
            [("Content-Type", "application/json"), ("Authorization", OAuthTestServer.basicAuthorization)],
            #"{"grant_type":"client_credentials"}"#)
        #expect(json.status == 400)
        #expect(Self.send(sink, "GET", "/oauth/token", [], "").status == 405)
    }

    @Test("every other request needs an issued, unexpired token, and gets RFC 6750 §3's 401 otherwise")
    func everythingElseNeedsAToken() throws {
        let directory = TemporaryDirectory("sink-oauth")
        let sink = try Self.sink(directory)
        let token = try #require(Self.object(Self.tokenRequest(sink))["access_token"] as? String)
        let record = #"{"id":"r1","kind":"sleep"}"#
        func post(_ authorization: String?) -> HTTPResponse {
            var headers = [("Idempotency-Key", "r1")]
            if let authorization { headers.append(("Authorization", authorization)) }
            return Self.send(sink, "POST", "/records", headers, record)
        }
        let bare = post(nil)
        #expect(bare.status == 401)
        #expect(Self.header(bare, "WWW-Authenticate") == #"Bearer realm="courier sink""#)
        let forged = post("Bearer 2YotnFZFEjr1zCsicMWpAA")
        #expect(forged.status == 401)
        #expect(Self.header(forged, "WWW-Authenticate") == #"Bearer realm="courier sink", error="invalid_token""#)
        #expect(post(OAuthTestServer.basicAuthorization).status == 401)
        // A token of another sink (this one restarted) is not this sink's.
        let other = SinkOAuth(clientID: OAuthTestServer.clientID, secret: OAuthTestServer.clientSecret)
        #expect(post("Bearer " + other.mint(now: .now())).status == 401)
        // One of its own, but expired.
        #expect(post("Bearer " + Self.oauth.mint(now: .now() - .seconds(3601))).status == 401)
        #expect(Self.send(sink, "GET", "/health", [], "").status == 401)

        #expect(post("Bearer " + token).status == 201)
        #expect(post("bearer " + token).status == 200, "the scheme is case-insensitive")
        #expect(Self.send(sink, "GET", "/health", [("Authorization", "Bearer " + token)], "").status == 200)
    }
}
