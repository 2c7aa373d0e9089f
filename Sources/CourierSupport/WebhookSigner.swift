import Foundation

/// Standard Webhooks signatures: `v1,` + base64 of
/// HMAC-SHA256(secret, "{id}.{timestamp}.{body}").
package struct WebhookSigner: Sendable {
    package let secret: [UInt8]

    package init(secret: [UInt8]) { self.secret = secret }

    /// `whsec_` + base64, as Standard Webhooks writes secrets; nil for
    /// anything else.
    package static func decodeSecret(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("whsec_"), let data = Data(base64Encoded: String(text.dropFirst(6))), !data.isEmpty
        else { return nil }
        return Array(data)
    }

    package func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
        let message = Array("\(id).\(timestamp).".utf8) + body
        // HMAC with SHA-256 fails only when libcrypto cannot allocate;
        // an empty signature is then refused by any verifier.
        guard let digest = Digest.hmacSHA256(key: secret, message: message) else { return "v1," }
        return "v1," + Data(digest).base64EncodedString()
    }

    /// Checks a `webhook-signature` header, which may list several
    /// space-separated signatures (key rotation).
    package func verify(id: String, timestamp: Int64, body: [UInt8], header: String) -> Bool {
        let expected = Array(signature(id: id, timestamp: timestamp, body: body).utf8)
        return header.split(separator: " ").contains { Digest.equalInConstantTime(Array($0.utf8), expected) }
    }
}
