import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool
import CourierSupport
import CourierTokens
import CourierTransport

/// OAuth 2.0 in a round's delivery: the token each OAuth subscriber's
/// requests carry, fetched when first needed; a 401 answer, which RFC 6750
/// §3.1 gives for a token that expired or was revoked, sends the request
/// once more with a new token (one new token per subscriber and round, so a
/// server that refuses every token costs one extra fetch, not a loop).
/// A subscriber whose token cannot be had is not sent to for the rest of
/// the round: its entries stay in `queued/`, untouched.
final class DeliveryAuthorization {
    private let tokens: OAuthTokens
    private let timeout: Duration
    private let round: RoundID
    private(set) var failures: [SubscriberName: OAuthError] = [:]
    /// Entries left in `queued/` for want of a token.
    private(set) var leftQueued: [SubscriberName: Int] = [:]
    /// The configuration's secrets and every token handed out so far: what
    /// settling redacts batch results with, before it cuts their fields.
    private(set) var redactor: Redactor
    private var learnt: [SubscriberName: Int] = [:]
    /// The generation of the token a 401 replaced in this round, per
    /// subscriber: requests sent with it (or older) go again; a 401 to a
    /// newer one is final.
    private var replaced: [SubscriberName: Int] = [:]

    init(session: SpoolSession, settings: AuthorizationSettings, log: EventLog, round: RoundID, mode: RoundMode) {
        // Every token is known to the session's ledger before it can be
        // sent, so an answer that echoes it is redacted.
        tokens = OAuthTokens(session: session, redactor: settings.redactor, log: log)
        self.timeout = settings.timeout(in: mode)
        self.round = round
        redactor = settings.redactor
    }

    enum Bearer {
        /// Not an OAuth subscriber: `token-file`, if any, applies.
        case notNeeded
        case token(String, generation: Int)
        case unavailable(OAuthError)
    }

    func bearer(for subscriber: Subscriber) -> Bearer {
        guard let client = subscriber.oauth else { return .notNeeded }
        if let failure = failures[subscriber.name] { return .unavailable(failure) }
        do {
            let token = try tokens.token(
                for: .subscriber(subscriber.name.value), client: client,
                options: CurlOptions(timeout: timeout, caFile: subscriber.caFile))
            if learnt[subscriber.name] != token.generation {
                redactor.add(token.value)
                learnt[subscriber.name] = token.generation
            }
            return .token(token.value, generation: token.generation)
        } catch {
            failures[subscriber.name] = error
            return .unavailable(error)
        }
    }

    func leave(_ count: Int, queuedFor subscriber: SubscriberName) {
        leftQueued[subscriber, default: 0] += count
    }

    /// Whether a request answered 401 goes once more, with a new token.
    /// The first 401 to a subscriber's current token in a round replaces
    /// it; requests sent with that token (or an older one, replaced when it
    /// expired) go again with the new one; a 401 to the replacement, or to
    /// a request that went again already, is final.
    func sendsAgain(_ request: PendingRequest, after response: DeliveryResponse) -> Bool {
        let subscriber = request.subscriber
        guard response.status == 401, response.error == nil, subscriber.oauth != nil, !request.reauthorised else {
            return false
        }
        if let generation = replaced[subscriber.name] { return request.tokenGeneration <= generation }
        if tokens.refuse(.subscriber(subscriber.name.value), generation: request.tokenGeneration) {
            replaced[subscriber.name] = request.tokenGeneration
        }
        return true
    }

    /// The `retry` lines of a request that goes again after a 401.
    func retryLines(_ request: PendingRequest, _ response: DeliveryResponse, now: Timestamp) -> [LedgerLine] {
        request.items.map { item in
            LedgerLine(
                time: now, actor: .round(round), subscriber: request.subscriber.name,
                key: item.entry.key.description, event: .retry, answer: LedgerAnswer(column: response.status),
                attempt: request.attempt,
                durationMilliseconds: response.duration.milliseconds,
                detail: "the OAuth token was refused; once more with a new one: " + Settler.detail(response))
        }
    }

    /// What the summary keeps: per subscriber, why it had no token and how
    /// many entries were left in `queued/`; nil when every token came.
    var summary: [String: String]? {
        guard !failures.isEmpty else { return nil }
        var texts: [String: String] = [:]
        for (name, failure) in failures {
            let left = leftQueued[name, default: 0]
            let entries = left == 1 ? "1 entry" : "\(left) entries"
            texts[name.value] =
                failure.description + (left > 0 ? "; \(entries) left in queued/ for the next round" : "")
        }
        return texts
    }
}
