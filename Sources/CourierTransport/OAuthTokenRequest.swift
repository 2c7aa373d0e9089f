import CourierConfig
import CourierPosix
import CourierSupport
import Foundation

/// The client-credentials grant, RFC 6749 §4.4: one form POST to the token
/// endpoint with the client authenticated by HTTP Basic (§2.3.1), under
/// the same TLS and redirect rules as every other request courier makes.
package enum OAuthTokenRequest {
    /// `grant_type=client_credentials`, and the scope when one is configured.
    package static func body(for client: OAuthClient) -> String {
        var pairs = [("grant_type", "client_credentials")]
        if let scope = client.scope { pairs.append(("scope", scope)) }
        return FormEncoding.encode(pairs)
    }

    /// A token, or why there is none. The answer's words are redacted with
    /// `redactor` (the client secret among them) before they are kept.
    package static func perform(
        _ client: OAuthClient, options: CurlOptions, redactor: Redactor, now: () -> Timestamp
    ) throws(OAuthError) -> OAuthToken {
        let url = client.tokenURL
        func failure(_ reason: String) -> OAuthError { OAuthError(url: url, reason: reason) }
        guard let credentials = client.basicCredentials else {
            throw failure("the client secret has not been read")
        }
        let headers: [HTTPHeaderField]
        do {
            headers = [
                try HTTPHeaderField(name: "Authorization", value: "Basic \(credentials)"),
                try HTTPHeaderField(name: "User-Agent", value: "courier/\(CourierVersion.current)"),
                HTTPHeaderField(constant: "Accept", "application/json"),
            ]
        } catch {
            throw failure("the client credentials cannot be sent: \(error)")
        }
        let started = now()
        let answer: HTTPFetch.Answer
        do {
            answer = try HTTPFetch(options: options, headers: headers).post(url, form: body(for: client))
        } catch {
            throw failure(redactor.redact(error.message))
        }
        guard (200...299).contains(answer.status) else {
            throw failure("HTTP \(answer.status): " + refusal(answer.body, redactor: redactor))
        }
        switch OAuthToken.parse(answer.body, obtained: started) {
        case .success(let token): return token
        case .failure(let problem): throw failure(problem.description)
        }
    }

    /// An RFC 6749 §5.2 error (`error`, `error_description`) in a few
    /// words, else the first bytes of whatever came back.
    static func refusal(_ body: [UInt8], redactor: Redactor) -> String {
        if let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let code = object["error"] as? String
        {
            let description = (object["error_description"] as? String).map { " (\($0))" } ?? ""
            return redactor.redact(code + description).utf8Prefix(DetailLimit.bytes)
        }
        return redactor.excerpt(body, limit: DetailLimit.bytes)
    }
}
