import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool
import CourierSupport
import CourierTransport

/// Request building: the POST for one pending request, single or batch,
/// with every header checked before anything is sent (Postfix's smtp
/// client composing the envelope). A value that cannot be a header is a
/// reason, not a request.
struct RequestBuilder {
    let settings: RequestSettings
    let headers: DeliveryHeaders
    /// How much of a single answer to keep: the ledger's 200 bytes, and
    /// enough past them that a secret straddling the cut is redacted whole.
    let answerCapture: Int

    /// A batch answer is read whole: every item's result is in it.
    static let batchAnswerCapture = 8 << 20

    enum Built {
        case ready(DeliveryRequest, headers: HeaderLines)
        /// Its items need attention for this reason; nothing was sent.
        case refused(String)
    }

    init(_ settings: RequestSettings, session: RoundID) {
        self.settings = settings
        self.headers = DeliveryHeaders(
            deviceID: settings.deviceID, session: session.value, subscribers: settings.subscribers)
        self.answerCapture = LedgerLine.detailLimit + settings.longestSecret
    }

    /// `url` with `atomic=true` added to its query: before a `#fragment`,
    /// which libcurl leaves off the request (RFC 3986, 3.5), and which
    /// may hold a `?` of its own.
    static func atomic(_ url: String) -> String {
        let parts = URLText(url)
        return parts.beforeQuery + "?" + (parts.query.map { $0 + "&" } ?? "") + "atomic=true" + parts.fragment
    }

    /// The request's POST; `bearer` is the OAuth access token it goes with.
    func build(_ request: PendingRequest, now: Timestamp, bearer: String? = nil) -> Built {
        let subscriber = request.subscriber
        var wire: DeliveryRequest
        if subscriber.mode == .batch {
            // Each item from the fields its record's one parse found (the
            // same that sized it for `max-batch-bytes`).
            let items = request.items.map { item in
                BatchBody.Item(key: item.entry.key.description, record: item.body, fields: item.fields)
            }
            let body = BatchBody.encode(items, deviceID: settings.deviceID)
            let url = subscriber.batch.atomic ? Self.atomic(subscriber.url) : subscriber.url
            wire = DeliveryRequest(
                key: Self.batchKey(request.items), body: body, subscriber: subscriber, url: url,
                answerCapture: Self.batchAnswerCapture)
        } else {
            let item = request.items[0]
            wire = DeliveryRequest(
                key: item.entry.key.description, body: item.body, subscriber: subscriber, url: subscriber.url,
                answerCapture: answerCapture)
            if let tag = item.fields.precondition {
                do { wire.extraHeaders.append(try HTTPHeaderField(constant: "If-Match", value: tag)) } catch {
                    return .refused("its `etag`/`version` cannot be sent as If-Match: \(error)")
                }
            }
        }
        if subscriber.gzip, let compressed = Gzip.compress(wire.body) {
            wire = DeliveryRequest(
                key: wire.key, body: compressed, subscriber: subscriber, url: wire.url,
                extraHeaders: wire.extraHeaders + [Self.gzipEncoding], answerCapture: wire.answerCapture)
        }
        wire.bearer = bearer
        do { return .ready(wire, headers: try headers.lines(for: wire, now: now)) } catch {
            return .refused("cannot be sent: \(error)")
        }
    }

    /// `Content-Encoding: gzip`: a constant, well-formed field.
    private static let gzipEncoding = HTTPHeaderField(constant: "Content-Encoding", "gzip")

    /// A batch's own Idempotency-Key: the same entries give the same key,
    /// so a retried batch is recognisable.
    static func batchKey(_ items: [DeliveryItem]) -> String {
        // FNV-1a over the entries' names, a newline between each two,
        // hashed as they come rather than joined first.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for (index, item) in items.enumerated() {
            if index > 0 { hash = (hash ^ UInt64(UInt8(ascii: "\n"))) &* 0x100_0000_01b3 }
            for byte in item.entry.description.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        let hex = String(hash, radix: 16)
        return "batch-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
