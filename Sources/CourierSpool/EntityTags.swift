import CourierIdentifiers
import CourierPosix
import Foundation
import Glibc

/// The last etag a subscriber's server gave for one entity, with the
/// server's id for it: what a later `UPDATE` of the entity names as its
/// `etag` (docs/design.md §8).
package struct EntityTag: Codable, Sendable, Equatable {
    package var etag: String
    package var serverID: String?
    /// The item whose answer carried it.
    package var key: String
    /// When courier was given it, RFC 3339.
    package var time: String

    enum CodingKeys: String, CodingKey {
        case etag
        case serverID = "server_id"
        case key, time
    }

    package init(etag: String, serverID: String?, key: String, time: Timestamp) {
        self.etag = etag
        self.serverID = serverID
        self.key = key
        self.time = time.rfc3339
    }

    /// A longer etag is not kept: it could not be a header a server takes.
    package static let maximumLength = 256

    /// An etag a person can copy into a record and courier can send as
    /// `If-Match`: 1–256 bytes, no control byte.
    package static func isKeepable(_ etag: String) -> Bool {
        !etag.isEmpty && etag.utf8.count <= maximumLength && !etag.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }
}

/// An etag to keep: for which entity, from which subscriber.
package struct EntityTagUpdate: Sendable {
    package let subscriber: SubscriberName
    package let entity: RecordID
    package let tag: EntityTag

    package init(subscriber: SubscriberName, entity: RecordID, tag: EntityTag) {
        self.subscriber = subscriber
        self.entity = entity
        self.tag = tag
    }
}

/// `.courier/etags/SUB/ENTITY`: one small JSON file per entity and
/// subscriber, replaced (by a commit) each time the server gives a new
/// etag. A file per entity, so that `courier etag` reads one file rather
/// than the ledger, and prune ages out entities untouched for the
/// retention like `sent/` entries.
package final class EntityTagStore {
    package static let folderName = FileName("etags")
    private let spool: Spool
    private var folders: [SubscriberName: DirectoryHandle] = [:]

    package init(spool: Spool) { self.spool = spool }

    /// The state files that keep `tags`, the last one per entity and
    /// subscriber winning: a commit stages them, makes them durable with
    /// the rest of its files, and renames them over the old ones.
    static func files(for tags: [EntityTagUpdate]) -> [Transition.NewFile] {
        var latest: [String: EntityTagUpdate] = [:]
        var order: [String] = []
        for update in tags {
            let id = update.subscriber.value + "/" + update.entity.value
            if latest[id] == nil { order.append(id) }
            latest[id] = update
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return order.compactMap { id in
            guard let update = latest[id], let data = try? encoder.encode(update.tag) else { return nil }
            return Transition.NewFile(
                Array(data) + [0x0A], as: FileName(update.entity.value), in: .entityTags(update.subscriber),
                replacing: true)
        }
    }

    /// The tag kept for `entity` from `subscriber`; nil when none is (or
    /// its file was edited into something else).
    package func tag(of entity: RecordID, from subscriber: SubscriberName) throws(SpoolError) -> EntityTag? {
        guard let folder = try folder(for: subscriber) else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try folder.openFile(FileName(entity.value), flags: O_RDONLY).read(upTo: 64 << 10)
        } catch let error where error.errno == .noSuchFile {
            return nil
        } catch {
            throw SpoolError(error)
        }
        return try? JSONDecoder().decode(EntityTag.self, from: Data(bytes))
    }

    /// Every subscriber's tag for `entity`, by subscriber name.
    package func tags(of entity: RecordID) throws(SpoolError) -> [(subscriber: SubscriberName, tag: EntityTag)] {
        var found: [(subscriber: SubscriberName, tag: EntityTag)] = []
        for subscriber in try subscribers() {
            if let tag = try tag(of: entity, from: subscriber) { found.append((subscriber, tag)) }
        }
        return found
    }

    /// The subscribers that have a folder of tags.
    package func subscribers() throws(SpoolError) -> [SubscriberName] {
        guard let root = try Self.open(Self.folderName, in: spool.control) else { return [] }
        do { return try root.sortedNames().compactMap { $0.string.flatMap(SubscriberName.init) } } catch {
            throw SpoolError(error)
        }
    }

    /// `etags/SUB/`; nil when no etag of SUB's has been kept. (A commit
    /// makes it, `SpoolPlace.entityTags`.)
    package func folder(for subscriber: SubscriberName) throws(SpoolError) -> DirectoryHandle? {
        if let open = folders[subscriber] { return open }
        guard let root = try Self.open(Self.folderName, in: spool.control),
            let folder = try Self.open(FileName(subscriber.value), in: root)
        else { return nil }
        folders[subscriber] = folder
        return folder
    }

    private static func open(_ name: FileName, in parent: DirectoryHandle) throws(SpoolError) -> DirectoryHandle? {
        do {
            return try parent.openDirectory(name)
        } catch let error where error.errno == .noSuchFile {
            return nil
        } catch {
            throw SpoolError(error)
        }
    }
}
