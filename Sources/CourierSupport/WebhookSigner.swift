import CCrypto
import Foundation

/// Standard Webhooks signatures: `v1,` + base64 of
/// HMAC-SHA256(secret, "{id}.{timestamp}.{body}").
public struct WebhookSigner: Sendable {
    public let secret: [UInt8]

    public init(secret: [UInt8]) { self.secret = secret }

    /// `whsec_` + base64, as Standard Webhooks writes secrets; nil for
    /// anything else.
    public static func decodeSecret(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("whsec_"), let data = Data(base64Encoded: String(text.dropFirst(6))), !data.isEmpty
        else { return nil }
        return Array(data)
    }

    public func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
        let message = Array("\(id).\(timestamp).".utf8) + body
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = secret.withUnsafeBytes { key in
            message.withUnsafeBytes { data in
                HMAC(
                    EVP_sha256(), key.baseAddress, Int32(key.count),
                    data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    data.count, &digest, &length) != nil
            }
        }
        // HMAC with SHA-256 fails only when libcrypto cannot allocate;
        // an empty signature is then refused by any verifier.
        guard ok else { return "v1," }
        return "v1," + Data(digest.prefix(Int(length))).base64EncodedString()
    }

    /// Checks a `webhook-signature` header, which may list several
    /// space-separated signatures (key rotation).
    public func verify(id: String, timestamp: Int64, body: [UInt8], header: String) -> Bool {
        let expected = Array(signature(id: id, timestamp: timestamp, body: body).utf8)
        return header.split(separator: " ").contains { candidate in
            let bytes = Array(candidate.utf8)
            guard bytes.count == expected.count else { return false }
            // Constant time: compare every byte whatever the first mismatch.
            return zip(bytes, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }
}
