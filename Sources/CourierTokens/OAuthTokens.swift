import CourierConfig
import CourierPosix
import CourierSpool
import CourierSupport
import CourierTransport
import Foundation

/// The OAuth tokens of one round or one catalog sync: the one in memory
/// while it is fresh, else the one kept in `.courier/` by an earlier
/// process, else a new one from the token endpoint (kept there in turn,
/// mode 0600, by a commit of the session). A token a server refused (401)
/// is not taken from the cache again. Every token it hands out is first
/// given to the session as a secret, so the ledger redacts it. Not shared
/// between threads.
package final class OAuthTokens {
    private let session: SpoolSession
    private let redactor: Redactor
    private let log: EventLog
    private let now: () -> Timestamp
    private var current: [OAuthOwner: OAuthToken] = [:]
    private var refused: Set<OAuthOwner> = []
    /// Counts the tokens handed out per owner, so a 401 can tell whether
    /// the token it refused is still the current one.
    private var generations: [OAuthOwner: Int] = [:]

    package init(
        session: SpoolSession, redactor: Redactor, log: EventLog = .silent,
        now: @escaping () -> Timestamp = Timestamp.now
    ) {
        self.session = session
        self.redactor = redactor
        self.log = log
        self.now = now
    }

    /// A fresh token for `owner`, and its generation.
    package func token(for owner: OAuthOwner, client: OAuthClient, options: CurlOptions) throws(OAuthError) -> (
        value: String, generation: Int
    ) {
        let time = now()
        if let token = current[owner], token.isFresh(at: time) {
            return (token.value, generations[owner, default: 0])
        }
        let cache = OAuthTokenCache(session: session, owner: owner, client: client)
        if !refused.contains(owner), let kept = cache.load(), kept.isFresh(at: time) {
            return adopt(kept, for: owner)
        }
        let fetched = try OAuthTokenRequest.perform(client, options: options, redactor: redactor, now: now)
        log(
            .info,
            "\(owner): new OAuth token from \(Redactor.displayURL(client.tokenURL)), good until \(fetched.expires.rfc3339)"
        )
        refused.remove(owner)
        do { try cache.save(fetched) } catch {
            // The token is good for this process all the same; the next
            // one will fetch its own.
            log(.warning, "\(owner): unable to keep the OAuth token in .courier/: \(error)")
        }
        return adopt(fetched, for: owner)
    }

    private func adopt(_ token: OAuthToken, for owner: OAuthOwner) -> (value: String, generation: Int) {
        session.addSecret(token.value)
        current[owner] = token
        generations[owner, default: 0] += 1
        return (token.value, generations[owner, default: 0])
    }

    /// A server answered 401 to the token of `generation`: unless a newer
    /// one has replaced it meanwhile, it is forgotten (memory and cache),
    /// and the next `token` fetches anew. True when it was the current one.
    @discardableResult
    package func refuse(_ owner: OAuthOwner, generation: Int) -> Bool {
        guard generations[owner, default: 0] == generation, current[owner] != nil else { return false }
        current[owner] = nil
        refused.insert(owner)
        // Failing to forget it only means the next process tries it once.
        _ = try? session.commit(Transition(removals: [.init(FileName(owner.cacheFile), in: .control)]))
        return true
    }
}

/// `.courier/oauth-subscriber-NAME.json` (or `oauth-catalog-NAME.json`):
/// the token, when it was obtained and when it expires, and the client it
/// was issued to, so that a changed configuration does not reuse it.
/// Written through `tmp/` like every state file, but mode 0600: it is a
/// credential.
struct OAuthTokenCache {
    let session: SpoolSession
    let owner: OAuthOwner
    let client: OAuthClient

    /// The kept token, if there is one for this client; anything unreadable
    /// or malformed is no token (a new one replaces it).
    func load() -> OAuthToken? {
        guard let bytes = session.spool.readControlFile(owner.cacheFile, limit: 64 * 1024),
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
            object["token_url"] as? String == client.tokenURL, object["client_id"] as? String == client.clientID,
            object["scope"] as? String == client.scope,
            let value = object["access_token"] as? String,
            let obtained = (object["obtained"] as? String).flatMap(Timestamp.init(rfc3339:)),
            let expires = (object["expires"] as? String).flatMap(Timestamp.init(rfc3339:))
        else { return nil }
        return OAuthToken(value: value, obtained: obtained, expires: expires)
    }

    func save(_ token: OAuthToken) throws(SpoolError) {
        var object: [String: Any] = [
            "access_token": token.value, "token_url": client.tokenURL, "client_id": client.clientID,
            "obtained": token.obtained.rfc3339, "expires": token.expires.rfc3339,
        ]
        if let scope = client.scope { object["scope"] = scope }
        // Only strings go in: serialising them cannot fail.
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        try session.commit(
            Transition(newFiles: [
                .init(Array(data) + [0x0A], as: FileName(owner.cacheFile), in: .control, mode: 0o600, replacing: true)
            ]))
    }
}

/// A catalog's `Authorization` for `HTTPFetch`: the current token, and a
/// new one once per sync after a 401.
package final class OAuthBearer: BearerSource {
    let tokens: OAuthTokens
    let owner: OAuthOwner
    let client: OAuthClient
    let options: CurlOptions
    private var renewedOnce = false
    /// The tokens sent so far, to take out of error answers.
    private var sent = Redactor()

    package init(tokens: OAuthTokens, owner: OAuthOwner, client: OAuthClient, options: CurlOptions) {
        self.tokens = tokens
        self.owner = owner
        self.client = client
        self.options = options
    }

    package func field() throws(FetchError) -> (HTTPHeaderField, generation: Int) {
        let token: (value: String, generation: Int)
        do { token = try tokens.token(for: owner, client: client, options: options) } catch { throw .token(error) }
        sent.add(token.value)
        do {
            return (try HTTPHeaderField(name: "Authorization", value: "Bearer \(token.value)"), token.generation)
        } catch {
            throw .token(OAuthError(url: client.tokenURL, reason: "the token cannot be sent: \(error)"))
        }
    }

    /// After a 401 to the token of `generation`: a new token to try once
    /// more with, or nil when one was already tried in this sync.
    package func renewed(after generation: Int) throws(FetchError) -> HTTPHeaderField? {
        guard !renewedOnce else { return nil }
        renewedOnce = true
        tokens.refuse(owner, generation: generation)
        return try field().0
    }

    /// `body` with every token sent so far replaced by the redaction mark.
    package func redact(_ body: [UInt8]) -> [UInt8] {
        Array(sent.redact(String(decoding: body, as: UTF8.self)).utf8)
    }
}
