import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSupport

/// The headers of one delivery POST, built before the request is: a value
/// that cannot be a header (a record's `etag` with CR LF, say) stops this
/// item with a reason instead of reaching the wire. What every request of
/// a subscriber carries alike (the content type, User-Agent, the device
/// and the round, its token and its own `header =` lines) is checked and
/// made into lines once per round; a request adds its key, its extra
/// headers and its signature.
package struct DeliveryHeaders {
    let deviceID: String
    let session: String
    private let shared: [SubscriberName: Shared]

    package init(deviceID: String, session: String, subscribers: [Subscriber] = []) {
        self.deviceID = deviceID
        self.session = session
        let common = Self.common(deviceID: deviceID, session: session)
        var shared: [SubscriberName: Shared] = [:]
        for subscriber in subscribers { shared[subscriber.name] = Shared(subscriber, common: common) }
        self.shared = shared
    }

    /// A subscriber's lines, in the order they go: those after the key up
    /// to its token, and its own after the token. A field that cannot be
    /// a header is kept as the error each of its requests stops with.
    private struct Shared {
        let token: String?
        let headers: [HTTPHeaderField]
        let common: Result<HeaderLines, HeaderFieldError>
        let authorization: Result<HeaderLines, HeaderFieldError>?
        let own: HeaderLines

        init(_ subscriber: Subscriber, common: Result<HeaderLines, HeaderFieldError>) {
            token = subscriber.token
            headers = subscriber.headers
            self.common = common
            authorization = subscriber.token.map(DeliveryHeaders.authorization)
            own = HeaderLines(subscriber.headers)
        }

        /// Made for this subscriber as it is now: its token and headers
        /// are what they were when the round began.
        func fits(_ subscriber: Subscriber) -> Bool {
            token == subscriber.token && headers == subscriber.headers
        }
    }

    private static let contentType = HeaderLines([HTTPHeaderField(constant: "Content-Type", "application/json")])

    /// User-Agent, Courier-Device, Courier-Session and Expect.
    private static func common(deviceID: String, session: String) -> Result<HeaderLines, HeaderFieldError> {
        do throws(HeaderFieldError) {
            return .success(
                HeaderLines([
                    try HTTPHeaderField(name: "User-Agent", value: "courier/\(CourierVersion.current)"),
                    try HTTPHeaderField(name: "Courier-Device", value: deviceID),
                    try HTTPHeaderField(name: "Courier-Session", value: session),
                    // curl would otherwise wait up to a second for `100 Continue`.
                    HTTPHeaderField(constant: "Expect", ""),
                ]))
        } catch {
            return .failure(error)
        }
    }

    private static func authorization(_ token: String) -> Result<HeaderLines, HeaderFieldError> {
        do throws(HeaderFieldError) {
            return .success(HeaderLines([try HTTPHeaderField(constant: "Authorization", value: "Bearer \(token)")]))
        } catch {
            return .failure(error)
        }
    }

    package func lines(for request: DeliveryRequest, now: Timestamp) throws(HeaderFieldError) -> HeaderLines {
        let key = request.key
        let subscriber = request.subscriber
        let shared =
            self.shared[subscriber.name].flatMap { $0.fits(subscriber) ? $0 : nil }
            ?? Shared(subscriber, common: Self.common(deviceID: deviceID, session: session))
        var lines = Self.contentType
        lines.reserveCapacity(512)
        lines.append(try HTTPHeaderField(constant: "Idempotency-Key", value: key))
        lines.append(try shared.common.get())
        if let bearer = request.bearer {
            lines.append(try Self.authorization(bearer).get())
        } else if let authorization = shared.authorization {
            lines.append(try authorization.get())
        }
        lines.append(shared.own)
        for field in request.extraHeaders { lines.append(field) }
        if let secret = subscriber.signingSecret {
            let timestamp = now.secondsSinceEpoch
            let signature = WebhookSigner(secret: secret).signature(id: key, timestamp: timestamp, body: request.body)
            lines.append(try HTTPHeaderField(constant: "webhook-id", value: key))
            lines.append(try HTTPHeaderField(constant: "webhook-timestamp", value: String(timestamp)))
            lines.append(try HTTPHeaderField(constant: "webhook-signature", value: signature))
        }
        return lines
    }
}
