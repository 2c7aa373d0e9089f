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
        self.init(etag: etag, serverID: serverID, key: key, rfc3339: time.rfc3339)
    }

    /// With the time already written: the items of one answer share it.
    package init(etag: String, serverID: String?, key: String, rfc3339 time: String) {
        self.etag = etag
        self.serverID = serverID
        self.key = key
        self.time = time
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

/// `.courier/etags/SUB/.journal`: the etags subscriber SUB's server gave,
/// one line per answer (`EntityTagJournal`), appended by the commit that
/// moves the items out of `sending/`, after their ledger lines; the last
/// line of an entity wins. One append and one fsync per commit, where a
/// file per entity cost a create, a rename and an fsync per entity (most
/// of batch mode's time). An older courier's `etags/SUB/ENTITY` files
/// (`{etag, server_id, key, time}`) are still read, older than every line.
package final class EntityTagStore {
    package static let folderName = FileName("etags")
    /// A record id never starts with `.`: no entity's file has this name.
    package static let journalName = FileName(".journal")
    private let spool: Spool
    private var folders: [SubscriberName: DirectoryHandle] = [:]
    /// Each journal as last read, with the status it had then: a store
    /// that outlives a commit reads a journal again once it has changed.
    private var journals: [SubscriberName: (status: FileStatus, tags: [String: EntityTag])] = [:]

    package init(spool: Spool) { self.spool = spool }

    /// The tag kept for `entity` from `subscriber`; nil when none is (or
    /// an old file of it was edited into something else).
    package func tag(of entity: RecordID, from subscriber: SubscriberName) throws(SpoolError) -> EntityTag? {
        guard let folder = try folder(for: subscriber) else { return nil }
        if let kept = try journal(of: subscriber, in: folder)[entity.value] { return kept }
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

    /// SUB's journal read once per store: the last tag of each entity.
    private func journal(of subscriber: SubscriberName, in folder: DirectoryHandle) throws(SpoolError)
        -> [String: EntityTag]
    {
        do throws(SystemError) {
            let file = try folder.openFile(Self.journalName, flags: O_RDONLY)
            let status = try file.status()
            if let read = journals[subscriber], read.status.isSameVersion(as: status) { return read.tags }
            let tags = EntityTagJournal.latest(in: try file.read(upTo: Int.max, size: status.size)).tags
            journals[subscriber] = (status, tags)
            return tags
        } catch let error where error.errno == .noSuchFile {
            return [:]
        } catch {
            throw SpoolError(error)
        }
    }

    /// The journal's bytes; none when there is no journal.
    static func journalBytes(in folder: DirectoryHandle) throws(SpoolError) -> [UInt8] {
        do {
            return try folder.openFile(journalName, flags: O_RDONLY).read(upTo: Int.max)
        } catch let error where error.errno == .noSuchFile {
            return []
        } catch {
            throw SpoolError(error)
        }
    }

    /// The rewrite of SUB's journal without the entities whose last tag is
    /// older than `cutoff` (prune's), and those entities; nil when none is.
    package func journalPruned(of subscriber: SubscriberName, olderThan cutoff: Timestamp) throws(SpoolError)
        -> (file: Transition.NewFile, removed: [String])?
    {
        guard let folder = try folder(for: subscriber) else { return nil }
        let pruned = EntityTagJournal.pruned(try Self.journalBytes(in: folder), olderThan: cutoff)
        guard !pruned.removed.isEmpty else { return nil }
        journals[subscriber] = nil
        let file = Transition.NewFile(
            pruned.bytes, as: Self.journalName, in: .entityTags(subscriber), replacing: true)
        return (file, pruned.removed)
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
