import CourierIdentifiers
import CourierPosix

/// The lines of `.courier/etags/SUB/.journal`:
/// `ENTITY<TAB>ETAG<TAB>SERVER-ID<TAB>KEY<TAB>TIME`, each field escaped as
/// the ledger's are (an empty server id is none). Each append starts with
/// a newline, so that a line a power cut cut short is ended before the
/// next one: such a line, or any line without its five fields, is skipped.
enum EntityTagJournal {
    /// The lines appended for `tags`, in order.
    static func lines(for tags: [EntityTagUpdate]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "\n")]
        for update in tags { append(update.entity.value, update.tag, to: &bytes) }
        return bytes
    }

    private static func append(_ entity: String, _ tag: EntityTag, to bytes: inout [UInt8]) {
        let tab = UInt8(ascii: "\t")
        LedgerLine.appendEscaped(entity, to: &bytes)
        bytes.append(tab)
        LedgerLine.appendEscaped(tag.etag, to: &bytes)
        bytes.append(tab)
        LedgerLine.appendEscaped(tag.serverID ?? "", to: &bytes)
        bytes.append(tab)
        LedgerLine.appendEscaped(tag.key, to: &bytes)
        bytes.append(tab)
        LedgerLine.appendEscaped(tag.time, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// The last tag of each entity in `bytes`, and how many lines named
    /// one (to tell how much a rewrite would save).
    static func latest(in bytes: [UInt8]) -> (tags: [String: EntityTag], order: [String], lines: Int) {
        var tags: [String: EntityTag] = [:]
        var order: [String] = []
        var lines = 0
        var start = 0
        while let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            defer { start = end + 1 }
            let fields = bytes[start..<end].split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
            guard fields.count == 5 else { continue }
            let text = fields.map { LedgerLine.unescape(Substring(decoding: $0, as: UTF8.self)) }
            guard RecordID(text[0]) != nil, EntityTag.isKeepable(text[1]) else { continue }
            var tag = EntityTag(etag: text[1], serverID: text[2].isEmpty ? nil : text[2], key: text[3], time: .now())
            tag.time = text[4]
            if tags.updateValue(tag, forKey: text[0]) == nil { order.append(text[0]) }
            lines += 1
        }
        return (tags, order, lines)
    }

    /// A journal with one line per entity whose last tag is as new as
    /// `cutoff`, and the entities whose last tag is older (by its time;
    /// one whose time cannot be read is kept).
    static func pruned(_ bytes: [UInt8], olderThan cutoff: Timestamp) -> (bytes: [UInt8], removed: [String]) {
        let read = latest(in: bytes)
        var result: [UInt8] = []
        var removed: [String] = []
        for entity in read.order {
            guard let tag = read.tags[entity] else { continue }
            if let time = Timestamp(rfc3339: tag.time), time < cutoff {
                removed.append(entity)
            } else {
                append(entity, tag, to: &result)
            }
        }
        return (result, removed)
    }

    /// A journal with one line per entity, in the order each was first
    /// named, then `tags`.
    static func compacted(_ bytes: [UInt8], adding tags: [EntityTagUpdate]) -> [UInt8] {
        let read = latest(in: bytes)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count / 2)
        for entity in read.order {
            if let tag = read.tags[entity] { append(entity, tag, to: &result) }
        }
        return result + lines(for: tags).dropFirst()
    }
}

/// When a commit rewrites a subscriber's etag journal rather than append
/// to it (`SpoolSession.entityTagChanges`).
struct EntityTagCompaction {
    /// Below this a journal is never read by a commit.
    var size = 1 << 20
    /// A journal that would not shrink by half is next read at this size.
    var nextCheck: [SubscriberName: Int] = [:]
}
