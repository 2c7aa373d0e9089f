/// An optional written as `null` when absent: a JSON key courier(1) lists
/// is always there. A plain optional property leaves its key out instead
/// (`server_id` in `etag --json`, `queued` in `hold --json`).
@propertyWrapper
struct OrNull<Value: Encodable & Sendable>: Encodable, Sendable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}
