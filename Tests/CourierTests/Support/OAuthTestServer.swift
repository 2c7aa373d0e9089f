import Foundation

@testable import CourierSink
@testable import CourierSupport

/// An OAuth 2.0 authorization server and a resource server on 127.0.0.1,
/// written from the examples of RFC 6749 and RFC 6750 rather than from
/// courier's code: the client of §2.3.1 (`s6BhdRkqt3`, secret
/// `7Fjfp0ZBr1KtDRbnfVdmIw`, authenticated with the very Basic header the
/// RFC prints), the token answer of §4.4.3/§5.1 with `token_type`
/// `Bearer`, the error answer of §5.2, and RFC 6750 §3's 401 with
/// `WWW-Authenticate`. The resource server stores records and serves
/// catalogs through a plain `Sink` once the bearer token checks out.
final class OAuthTestServer {
    static let clientID = "s6BhdRkqt3"
    static let clientSecret = "7Fjfp0ZBr1KtDRbnfVdmIw"
    /// RFC 6749 §2.3.1: `Authorization: Basic czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3`.
    static let basicAuthorization = "Basic czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3"
    /// The tokens handed out, in turn: RFC 6749's access token of §4.4.3
    /// and §5.1, then the refresh token of §5.1 (used here as an access
    /// token), then made-up ones.
    static let tokens = ["2YotnFZFEjr1zCsicMWpAA", "tGzv3JOkF0XG5Qx2TlKWIA", "mF_9.B5f-4.1JqM", "h480djs93hd8"]

    struct State {
        var issued: [String] = []
        var revoked: Set<String> = []
        /// Every token is refused by the resource server (a misconfigured audience, say).
        var refuseEveryToken = false
        var expiresIn = 3600
        /// The token endpoint answers this status with `{"error":"temporarily_unavailable"}`.
        var tokenEndpointStatus: Int?
    }

    let state = Locked(State())
    let server: LoopbackServer
    let sink: Sink

    init(directory: TemporaryDirectory, catalogs: String? = nil) throws {
        let sink = try Sink(directory: directory.path + "/resource", catalogs: catalogs)
        let state = self.state
        self.sink = sink
        server = try LoopbackServer { request, _ in
            if request.path == "/token" { return .respond(Self.token(request, state: state)) }
            return .respond(Self.resource(request, state: state, sink: sink))
        }
    }

    var base: String { "http://\(server.server.address)" }
    var tokenURL: String { base + "/token" }
    var hookURL: String { base + "/hook" }

    var tokenRequests: [HTTPRequest] { server.requests.filter { $0.path == "/token" } }
    var resourceRequests: [HTTPRequest] { server.requests.filter { $0.path != "/token" } }
    var issued: [String] { state.withLock { $0.issued } }

    func revoke(_ token: String) { state.withLock { _ = $0.revoked.insert(token) } }

    static func json(_ status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        // §5.1 and §5.2: the answers are not to be cached.
        HTTPResponse(
            status: status,
            headers: [
                ("Content-Type", "application/json;charset=UTF-8"), ("Cache-Control", "no-store"),
                ("Pragma", "no-cache"),
            ] + headers, body: Array(text.utf8))
    }

    /// RFC 6749 §4.4.2: `POST`, `grant_type=client_credentials` form-encoded,
    /// the client in HTTP Basic.
    static func token(_ request: HTTPRequest, state: Locked<State>) -> HTTPResponse {
        if let status = state.withLock({ $0.tokenEndpointStatus }) {
            return json(status, #"{"error":"temporarily_unavailable"}"#)
        }
        guard request.method == "POST",
            request.header("content-type")?.hasPrefix("application/x-www-form-urlencoded") == true,
            let body = String(validating: request.body, as: UTF8.self),
            body == "grant_type=client_credentials" || body.hasPrefix("grant_type=client_credentials&scope=")
        else { return json(400, "{\n  \"error\":\"invalid_request\"\n}") }
        guard request.header("authorization") == basicAuthorization else {
            return json(401, #"{"error":"invalid_client"}"#, headers: [("WWW-Authenticate", #"Basic realm="example""#)])
        }
        let (token, lifetime) = state.withLock { state -> (String, Int) in
            let token =
                state.issued.count < tokens.count ? tokens[state.issued.count] : "token-\(state.issued.count + 1)"
            state.issued.append(token)
            return (token, state.expiresIn)
        }
        return json(
            200,
            """
            {
              "access_token":"\(token)",
              "token_type":"Bearer",
              "expires_in":\(lifetime),
              "example_parameter":"example_value"
            }
            """)
    }

    /// RFC 6750 §2.1 and §3: the token in `Authorization: Bearer`, a 401
    /// with `WWW-Authenticate` when it is missing or no good. The error
    /// description repeats the token, as careless servers do: courier must
    /// not write it down.
    static func resource(_ request: HTTPRequest, state: Locked<State>, sink: Sink) -> HTTPResponse {
        let presented = request.header("authorization").flatMap { value -> String? in
            value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : nil
        }
        let good = state.withLock { state in
            presented.map { state.issued.contains($0) && !state.revoked.contains($0) && !state.refuseEveryToken }
                ?? false
        }
        guard good else {
            return json(
                401, #"{"error":"invalid_token","error_description":"The access token \#(presented ?? "-") expired"}"#,
                headers: [("WWW-Authenticate", #"Bearer realm="example", error="invalid_token""#)])
        }
        if case .respond(let response) = sink.handle(request) { return response }
        return json(500, #"{"error":"server_error"}"#)
    }
}
