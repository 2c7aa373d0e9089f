import CCrypto

package enum Digest {
    /// SHA-256 as lowercase hex.
    package static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        bytes.withUnsafeBufferPointer { buffer in _ = SHA256(buffer.baseAddress, buffer.count, &digest) }
        return hex(digest)
    }

    /// Lowercase hex, two digits a byte, written straight into one buffer:
    /// a String per byte, joined, cost the sink more than the digest.
    package static func hex(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(HexDigits.lowercase[Int(byte >> 4)])
            text.append(HexDigits.lowercase[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// HMAC-SHA256 of `message` under `key`; nil only when libcrypto cannot
    /// allocate.
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = key.withUnsafeBytes { key in
            message.withUnsafeBytes { data in
                HMAC(
                    EVP_sha256(), key.baseAddress, Int32(key.count),
                    data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count, &digest, &length) != nil
            }
        }
        return ok ? Array(digest.prefix(Int(length))) : nil
    }

    /// Whether two byte strings are equal, looking at every byte whatever
    /// the first difference: the time taken tells an attacker nothing.
    package static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
