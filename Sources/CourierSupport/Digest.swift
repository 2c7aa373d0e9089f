import CCrypto

package enum Digest {
    /// SHA-256 as lowercase hex.
    package static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        bytes.withUnsafeBufferPointer { buffer in _ = SHA256(buffer.baseAddress, buffer.count, &digest) }
        return digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
