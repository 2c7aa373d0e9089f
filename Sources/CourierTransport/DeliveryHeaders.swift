import CourierConfig
import CourierPosix
import CourierSupport

/// The headers of one delivery POST, built before the request is: a value
/// that cannot be a header (a record's `etag` with CR LF, say) stops this
/// item with a reason instead of reaching the wire.
package struct DeliveryHeaders {
    let deviceID: String
    let session: String

    package init(deviceID: String, session: String) {
        self.deviceID = deviceID
        self.session = session
    }

    package func fields(for request: DeliveryRequest, now: Timestamp) throws(HeaderFieldError) -> [HTTPHeaderField] {
        let key = request.key
        var fields = [
            HTTPHeaderField(constant: "Content-Type", "application/json"),
            try HTTPHeaderField(name: "Idempotency-Key", value: key),
            try HTTPHeaderField(name: "User-Agent", value: "courier/\(CourierVersion.current)"),
            try HTTPHeaderField(name: "Courier-Device", value: deviceID),
            try HTTPHeaderField(name: "Courier-Session", value: session),
            // curl would otherwise wait up to a second for `100 Continue`.
            HTTPHeaderField(constant: "Expect", ""),
        ]
        if let token = request.bearer ?? request.subscriber.token {
            fields.append(try HTTPHeaderField(name: "Authorization", value: "Bearer \(token)"))
        }
        fields += request.subscriber.headers
        fields += request.extraHeaders
        if let secret = request.subscriber.signingSecret {
            let timestamp = now.secondsSinceEpoch
            let signature = WebhookSigner(secret: secret).signature(id: key, timestamp: timestamp, body: request.body)
            fields += [
                try HTTPHeaderField(name: "webhook-id", value: key),
                try HTTPHeaderField(name: "webhook-timestamp", value: String(timestamp)),
                try HTTPHeaderField(name: "webhook-signature", value: signature),
            ]
        }
        return fields
    }
}
