extension String {
    /// Whitespace trimmed from both ends; for config values, headers and secrets.
    package var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[start...end])
    }

    /// The first `limit` bytes of the UTF-8 form, never cutting a character
    /// in half.
    package func utf8Prefix(_ limit: Int) -> String {
        let bytes = Array(utf8)
        guard bytes.count > limit else { return self }
        var end = limit
        // Back up over continuation bytes (10xxxxxx) to a character start.
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: bytes[0..<end], as: UTF8.self)
    }
}
