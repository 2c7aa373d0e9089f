import Glibc

/// A directory entry name as the kernel stores it: bytes, not necessarily
/// UTF-8. Scripts may drop files with any name; courier must be able to
/// rename exactly the file it listed.
package struct FileName: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let bytes: [UInt8]

    package init(bytes: [UInt8]) { self.bytes = bytes }

    package init(_ string: String) { self.bytes = Array(string.utf8) }

    /// The bytes hashed as one buffer. The synthesized hash (the array's)
    /// feeds them to the hasher one at a time, and a round hashes a name
    /// several times per record (its lookups and sets of entries). The
    /// count first, so that two names hashed together stay apart.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// The name for people: invalid UTF-8 is shown as U+FFFD.
    package var description: String { String(decoding: bytes, as: UTF8.self) }

    /// The name as UTF-8 text, or nil when it is not valid UTF-8.
    package var string: String? { String(validating: bytes, as: UTF8.self) }

    /// A 64-bit FNV-1a hash of the bytes, the same in every process (Swift's
    /// `hashValue` is seeded per run): for sets of names too large to hold
    /// as names (`DirectoryStream.fingerprints`).
    package var fingerprint: UInt64 { Self.fingerprint(of: bytes) }

    package static func fingerprint(of bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    package static func < (lhs: FileName, rhs: FileName) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    /// The name NUL-terminated, in a buffer on the stack (the heap only
    /// for a name too long for it): every system call on a name makes one.
    func withCString<T, E: Error>(_ body: (UnsafePointer<CChar>) throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count + 1) {
            terminated in
            terminated.initializeElement(at: terminated.initialize(fromContentsOf: bytes), to: 0)
            // Never nil: the buffer holds at least the terminating NUL.
            guard let base = terminated.baseAddress else { preconditionFailure("a non-empty buffer has storage") }
            return base.withMemoryRebound(to: CChar.self, capacity: terminated.count) { pointer in
                do throws(E) { return .success(try body(pointer)) } catch { return .failure(error) }
            }
        }
        return try result.get()
    }
}
