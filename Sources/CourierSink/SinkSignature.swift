import CourierPosix
import CourierSupport

extension Sink {
    /// Headers the sink reads one value of; two of them make a request
    /// ambiguous.
    static let singleHeaders = [
        "idempotency-key", "webhook-id", "webhook-timestamp", "webhook-signature", "content-encoding", "if-match",
    ]

    /// Nil when the request's Standard Webhooks headers verify and bind its
    /// Idempotency-Key; else the JSON error for a 401.
    ///
    /// The signature covers webhook-id, the timestamp and the body, not the
    /// Idempotency-Key; the key is bound by requiring it to equal webhook-id
    /// (courier sends the same value in both). Otherwise a captured request
    /// replayed within the tolerance under other keys would be stored once
    /// per key. A batch's items, and so their `idempotency_key`s, are inside
    /// the signed body; its header key is the batch's own and is bound the
    /// same way.
    static func checkSignature(_ request: HTTPRequest, signer: WebhookSigner) -> String? {
        guard let id = request.header("webhook-id"), let stamp = request.header("webhook-timestamp"),
            let signature = request.header("webhook-signature")
        else { return #"{"error":"missing webhook-id, webhook-timestamp or webhook-signature"}"# }
        // Seconds since 1970 in digits, as Standard Webhooks writes them: no
        // sign, no spaces. The skew is taken in seconds with the overflow
        // reported, because the client picks the number (-9000000000 used to
        // overflow the nanosecond difference and kill the sink).
        guard !stamp.isEmpty, stamp.allSatisfy(\.isASCIIDigit), let seconds = Int64(stamp) else {
            return #"{"error":"webhook-timestamp is not whole seconds since 1970"}"#
        }
        let (skew, overflow) = Timestamp.now().secondsSinceEpoch.subtractingReportingOverflow(seconds)
        guard !overflow, skew.magnitude < UInt64(signatureTolerance.components.seconds) else {
            return #"{"error":"webhook-timestamp is too far from now"}"#
        }
        guard signer.verify(id: id, timestamp: seconds, body: request.body, header: signature) else {
            return #"{"error":"webhook-signature does not verify"}"#
        }
        guard request.header("idempotency-key") == id else {
            return #"{"error":"Idempotency-Key must equal webhook-id: the signature covers webhook-id, not the key"}"#
        }
        return nil
    }
}
