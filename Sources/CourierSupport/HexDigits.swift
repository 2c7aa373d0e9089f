/// The sixteen hex digits as bytes, for text written a byte at a time:
/// digests and JSON's `\u00XX` in lowercase, percent-encoding in uppercase
/// (RFC 3986 §2.1 says producers should).
package enum HexDigits {
    package static let lowercase = Array("0123456789abcdef".utf8)
    package static let uppercase = Array("0123456789ABCDEF".utf8)
}
