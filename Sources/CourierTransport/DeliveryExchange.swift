import CourierConfig
import CourierPosix
import CourierSupport
import Glibc

/// One POST to make: a single entry, or a batch of them.
package struct DeliveryRequest {
    /// The Idempotency-Key header (and Standard Webhooks id).
    package let key: String
    /// The bytes as they go on the wire (compressed when `gzip = true`).
    package let body: [UInt8]
    package let subscriber: Subscriber
    package let url: String
    package var extraHeaders: [HTTPHeaderField] = []
    /// The OAuth access token it goes with; nil: the subscriber's own
    /// `token-file`, if any.
    package var bearer: String?
    /// How much of the answer to keep: the ledger needs 200 bytes, a batch
    /// needs its whole `results`.
    package var answerCapture = DetailLimit.bytes

    package init(
        key: String, body: [UInt8], subscriber: Subscriber, url: String, extraHeaders: [HTTPHeaderField] = [],
        answerCapture: Int = DetailLimit.bytes
    ) {
        self.key = key
        self.body = body
        self.subscriber = subscriber
        self.url = url
        self.extraHeaders = extraHeaders
        self.answerCapture = answerCapture
    }
}

/// What came back from one POST.
package struct DeliveryResponse {
    package let status: Int
    package let error: CurlError?
    package let retryAfter: String?
    /// The first bytes of the answer's body (all of it for a batch).
    package let answer: [UInt8]
    package let duration: Duration
    /// The process (or the system) ran out of open files or memory making
    /// the request's socket: not the subscriber's doing, and no attempt.
    package let ownLimit: Errno?

    package init(
        status: Int, error: CurlError?, retryAfter: String?, answer: [UInt8], duration: Duration,
        ownLimit: Errno? = nil
    ) {
        self.ownLimit = ownLimit
        self.status = status
        self.error = error
        self.retryAfter = retryAfter
        self.answer = answer
        self.duration = duration
    }
}
