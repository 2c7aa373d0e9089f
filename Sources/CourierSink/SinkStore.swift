import CourierPosix
import CourierRecords
import CourierSupport
import Glibc

/// The sink's files: `new/KEY.json` per key, one file per stored record,
/// and the entities' ETags in `etags.tsv` (`SinkETagJournal`).
///
/// A request's records are decided in turn (`decide`), each against the
/// store and the records decided before it in the same request, and then
/// written together (`commit`): the ETag lines first, in one append, then
/// each record through `tmp/` (write, fsync, rename) and the folder's one
/// fsync. A crash between the two leaves an ETag whose record is not
/// stored; the client, with no answer, sends the record again, and it is
/// stored with the same ETag.
struct SinkStore {
    let tmp: DirectoryHandle
    let new: DirectoryHandle
    var etags: SinkETagJournal
    var stagingNames = SinkStagingNames()

    enum Verdict: Equatable {
        case stored(etag: String)
        /// The same key and body again; the entity's current ETag, if any.
        case duplicate(etag: String?)
        case conflict
        case preconditionFailed(current: String?)

        func response(key: IdempotencyKey) -> HTTPResponse {
            switch self {
            case .stored(let etag):
                var response = HTTPResponse.json(201, #"{"status":"stored","key":"\#(key)","etag":"\#(etag)"}"#)
                response.headers.append(("ETag", "\"\(etag)\""))
                return response
            case .duplicate:
                return .json(200, #"{"status":"duplicate","key":"\#(key)"}"#)
            case .conflict:
                return .json(422, #"{"error":"Idempotency-Key \#(key) was used before with a different body"}"#)
            case .preconditionFailed(let current):
                return .json(
                    412, #"{"error":"If-Match does not match the current version","etag":"\#(current ?? "")"}"#)
            }
        }
    }

    /// What one request will store, in the order it was decided.
    struct Pending {
        fileprivate var records: [(name: FileName, body: [UInt8])] = []
        fileprivate var bodies: [FileName: [UInt8]] = [:]
        fileprivate var tags: [(id: EntityID, etag: String)] = []
        fileprivate var newestTags: [EntityID: String] = [:]

        var isEmpty: Bool { records.isEmpty }
    }

    /// The verdict for storing `body` under `key`; a record to store joins
    /// `pending`. `entity` is the record that `body` names (`updates`, else
    /// `id`): its current ETag is what `If-Match` must name.
    func decide(
        _ body: [UInt8], key: IdempotencyKey, entity: EntityID?, ifMatch: String?, into pending: inout Pending
    ) throws(SystemError) -> Verdict {
        let name = FileName("\(key).json")
        let current = entity.flatMap { pending.newestTags[$0] ?? etags.current[$0] }
        if let earlier = pending.bodies[name] {
            return earlier == body ? .duplicate(etag: current) : .conflict
        }
        if let existing = try new.status(of: name), Timestamp.now() - existing.modified < Sink.keyLifetime {
            let stored = try new.openFile(name, flags: O_RDONLY).read(upTo: body.count + 1)
            return stored == body ? .duplicate(etag: current) : .conflict
        }
        if let ifMatch {
            let offered = ifMatch.split(separator: ",").map { Self.bareTag(String($0)) }
            guard let current, offered.contains(current) || offered.contains("*") else {
                return .preconditionFailed(current: current)
            }
        }
        let etag = ETag.of(body)
        pending.records.append((name, body))
        pending.bodies[name] = body
        if let entity {
            pending.tags.append((entity, etag))
            pending.newestTags[entity] = etag
        }
        return .stored(etag: etag)
    }

    /// Writes what `pending` holds: ETag lines, then records, then one
    /// fsync of `new/`.
    mutating func commit(_ pending: Pending) throws(SystemError) {
        guard !pending.isEmpty else { return }
        try etags.append(pending.tags)
        for record in pending.records {
            let staged = stagingNames.next(for: record.name)
            try tmp.stage(record.body, as: staged)
            try tmp.publish(staged, to: new, as: record.name, syncDirectory: false)
        }
        try new.sync()
    }

    /// The entity a record's version is kept under: its `entity_id`, else
    /// the record it `updates`, else its own id.
    static func entity(of record: Int, in outline: JSONOutline) -> EntityID? {
        (outline.member("entity_id", of: record) ?? outline.member("updates", of: record)
            ?? outline.member("id", of: record))
            .flatMap(outline.string).flatMap(EntityID.init)
    }

    static func bareTag(_ text: String) -> String {
        var tag = text.trimmingSpaces
        if tag.hasPrefix("W/") { tag.removeFirst(2) }
        if tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count >= 2 { tag = String(tag.dropFirst().dropLast()) }
        return tag
    }
}
