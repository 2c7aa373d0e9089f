extension String {
    /// `body` over the text's UTF-8 bytes: the String's own storage, which
    /// every native String has, else a contiguous copy. `withUTF8` needs a
    /// `var` copy of the String first, and that copy costs a retain and a
    /// release: on the per-record paths (ledger columns, batch bodies, etag
    /// checks) they were most of what a short value cost. Inlinable: as a
    /// generic across modules it was not specialized, and cost more than
    /// the copy it saves.
    @inlinable package func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return copy.withUTF8(body)
    }
}
