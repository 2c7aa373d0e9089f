import CourierPosix

/// A record's canonical id: 1–128 of `[A-Za-z0-9._:-]`, not starting
/// with `.`. The character set keeps every id a safe single path component.
package struct RecordID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let value: String

    package static let maximumLength = 128

    package init?(_ value: String) {
        guard Self.spells(value.utf8) else { return nil }
        self.value = value
    }

    /// The id these bytes spell, in one pass (intake reads one per record,
    /// in place in the record's bytes). A concrete slice, not a generic
    /// collection: called from another module, a generic one is not
    /// specialized, and its every byte went through a witness.
    package init?(bytes: ArraySlice<UInt8>) {
        guard Self.spells(bytes) else { return nil }
        value = String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the bytes are an id; `problem(with:)` says why not.
    private static func spells(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.count <= maximumLength && bytes.first != UInt8(ascii: ".")
            && bytes.allSatisfy(NameBytes.isID)
    }

    /// Why `value` is not an id, in words for the ledger; nil when it is one.
    package static func problem(with value: String) -> String? {
        let bytes = value.utf8
        if bytes.isEmpty { return "id is empty" }
        if bytes.count > maximumLength { return "id is \(bytes.count) bytes long (at most \(maximumLength))" }
        if bytes.first == UInt8(ascii: ".") { return "id starts with '.'" }
        if let bad = bytes.first(where: { !NameBytes.isID($0) }) {
            return "id contains a byte that is not \(NameBytes.idClass) (0x\(String(bad, radix: 16)))"
        }
        return nil
    }

    package var description: String { value }

    package static func < (lhs: RecordID, rhs: RecordID) -> Bool { lhs.value < rhs.value }
}

/// The Idempotency-Key an item is sent with: the record id, or `ID#N`
/// (N ≥ 2) for a deliberate duplicate made by `courier copy`.
package struct DeliveryKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let id: RecordID
    package let copy: Int?

    package init(id: RecordID, copy: Int? = nil) {
        self.id = id
        self.copy = copy
    }

    package init?(_ text: String) {
        let parts = text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        guard let id = RecordID(String(parts[0])) else { return nil }
        if parts.count == 2 {
            guard parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }), parts[1].first != "0",
                let copy = Int(parts[1]), copy >= 2, copy < 1_000_000
            else { return nil }
            self.init(id: id, copy: copy)
        } else {
            self.init(id: id)
        }
    }

    package var description: String { copy.map { "\(id.value)#\($0)" } ?? id.value }

    package static func < (lhs: DeliveryKey, rhs: DeliveryKey) -> Bool {
        (lhs.id, lhs.copy ?? 1) < (rhs.id, rhs.copy ?? 1)
    }
}

/// A subscriber's name from `[subscriber NAME]`, and a catalog's from
/// `[catalog NAME]`: `[A-Za-z0-9_-]`, 1–64, so that `KEY@NAME.json` always
/// parses back.
package struct SubscriberName: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    package let value: String

    package init?(_ value: String) {
        guard NameBytes.isWord(value) else { return nil }
        self.value = value
    }

    package var description: String { value }

    package static func < (lhs: SubscriberName, rhs: SubscriberName) -> Bool { lhs.value < rhs.value }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let name = SubscriberName(text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "bad subscriber name"))
        }
        self = name
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// `KEY@SUBSCRIBER.json`: everything courier needs to know about an item
/// is in its file name, so `mv` between state folders just works.
///
/// The name's bytes are made once, when the entry is: a round asks for
/// them several times per record it delivers (lookups, renames, stamps).
/// They are also its identity: an id has no `@` and a subscriber no `#`
/// or `.`, so two entries are equal exactly when their file names are,
/// and hashing one array is cheaper than two strings and a copy number.
package struct EntryName: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let key: DeliveryKey
    package let subscriber: SubscriberName
    /// `KEY@SUB.json`.
    package let fileName: FileName

    package init(key: DeliveryKey, subscriber: SubscriberName) {
        self.key = key
        self.subscriber = subscriber
        let id = key.id.value.utf8, name = subscriber.value.utf8
        var bytes: [UInt8] = []
        bytes.reserveCapacity(id.count + name.count + 14)
        bytes.append(contentsOf: id)
        if let copy = key.copy {
            bytes.append(UInt8(ascii: "#"))
            bytes.append(contentsOf: String(copy).utf8)
        }
        bytes.append(UInt8(ascii: "@"))
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: ".json".utf8)
        fileName = FileName(bytes: bytes)
    }

    package static func == (lhs: EntryName, rhs: EntryName) -> Bool { lhs.fileName == rhs.fileName }

    package func hash(into hasher: inout Hasher) { hasher.combine(fileName) }

    /// Parses `KEY@SUB.json`, or `KEY@SUB` when `requireExtension` is false;
    /// nil for anything else (an intake file, a leftover, a stranger).
    package init?(_ text: String, requireExtension: Bool = true) {
        var base = Substring(text)
        if base.hasSuffix(".json") {
            base = base.dropLast(5)
        } else if requireExtension {
            return nil
        }
        guard let at = base.lastIndex(of: "@"), let key = DeliveryKey(String(base[..<at])),
            let subscriber = SubscriberName(String(base[base.index(after: at)...]))
        else { return nil }
        self.init(key: key, subscriber: subscriber)
    }

    package init?(fileName: FileName) {
        // Most names a pass meets in queued/ are dropped files: one without
        // an `@` is no entry, and no text is made of it.
        guard fileName.bytes.contains(UInt8(ascii: "@")), let text = fileName.string else { return nil }
        self.init(text)
    }

    /// `KEY@SUB`, the form people type.
    package var description: String { "\(key)@\(subscriber)" }

    package static func < (lhs: EntryName, rhs: EntryName) -> Bool {
        (lhs.key, lhs.subscriber) < (rhs.key, rhs.subscriber)
    }
}
