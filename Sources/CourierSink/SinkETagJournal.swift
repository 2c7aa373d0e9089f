import CourierPosix
import CourierSupport
import Glibc

/// The sink's current ETag of each entity, kept in one append-only file,
/// `DIR/etags.tsv`: a line `ID<TAB>ETAG` for every stored record that names
/// an entity, the last line of an id winning. A file per entity cost a
/// create, a write, a rename and two fsyncs per item, the greater part of
/// the sink's batch work; an append is one write for a whole batch.
///
/// The file is read whole at start, and whatever another sink on the same
/// folder appended since is read before each request (`refresh`), so two
/// sinks on one folder still agree. A line a crash cut short is no ETag:
/// the start ends it with a newline, so the next append begins a line of
/// its own. A folder an older sink kept (`DIR/etags/ID`, a file per
/// entity) is read first, its tags older than every line.
struct SinkETagJournal {
    static let name = FileName("etags.tsv")
    /// Where sinks before the journal kept a file per entity.
    static let legacyFolder = FileName("etags")

    private let file: FileDescriptor
    /// How far the file has been read: the end of its last whole line.
    private var offset = 0
    private(set) var current: [EntityID: String] = [:]

    init(in root: DirectoryHandle) throws(SystemError) {
        let existed = try root.contains(Self.name)
        file = try root.openFile(Self.name, flags: O_RDWR | O_CREAT | O_APPEND)
        // A new file's name must survive a power cut before its lines count.
        if !existed { try root.sync() }
        if try root.contains(Self.legacyFolder) {
            current = try Self.legacyTags(in: root.openDirectory(Self.legacyFolder))
        }
        try refresh()
        let size = try file.status().size
        if offset < size {
            // A writer died in the middle of its last line.
            try file.write([UInt8(ascii: "\n")])
            try file.sync()
            offset = size + 1
        }
    }

    /// Reads the lines appended since the last read.
    mutating func refresh() throws(SystemError) {
        let size = try file.status().size
        guard size > offset else { return }
        let appended = try file.read(from: offset, upTo: size - offset)
        guard let end = appended.lastIndex(of: UInt8(ascii: "\n")) else { return }
        for line in appended[...end].split(separator: UInt8(ascii: "\n")) {
            guard let (id, tag) = Self.parse(line) else { continue }
            current[id] = tag
        }
        offset += end + 1
    }

    /// Appends the tags of one request's stored records with one write and
    /// one fsync; only then do they count here.
    mutating func append(_ tags: [(id: EntityID, etag: String)]) throws(SystemError) {
        guard !tags.isEmpty else { return }
        var bytes: [UInt8] = []
        for tag in tags {
            bytes += tag.id.text.utf8
            bytes.append(UInt8(ascii: "\t"))
            bytes += tag.etag.utf8
            bytes.append(UInt8(ascii: "\n"))
        }
        try file.write(bytes)
        try file.sync()
        for tag in tags { current[tag.id] = tag.etag }
    }

    /// `ID<TAB>ETAG`: an id as records name entities, a tag as the sink
    /// makes them (16 hex digits); anything else is a torn or foreign line.
    static func parse(_ line: ArraySlice<UInt8>) -> (EntityID, String)? {
        guard let tab = line.firstIndex(of: UInt8(ascii: "\t")),
            let id = EntityID(String(decoding: line[..<tab], as: UTF8.self))
        else { return nil }
        let tag = line[(tab + 1)...]
        guard tag.count == ETag.length, tag.allSatisfy(ETag.isDigit) else { return nil }
        return (id, String(decoding: tag, as: UTF8.self))
    }

    private static func legacyTags(in folder: DirectoryHandle) throws(SystemError) -> [EntityID: String] {
        var tags: [EntityID: String] = [:]
        let entries = try folder.entries()
        while let name = try entries.next() {
            guard let id = EntityID(name.description) else { continue }
            let tag = try folder.openFile(name, flags: O_RDONLY).read(upTo: ETag.length + 1)
            guard tag.count == ETag.length, tag.allSatisfy(ETag.isDigit) else { continue }
            tags[id] = String(decoding: tag, as: UTF8.self)
        }
        return tags
    }
}

/// The sink's ETags: the first 16 hex digits of the SHA-256 of a stored body.
enum ETag {
    static let length = 16

    static func of(_ body: [UInt8]) -> String { String(Digest.sha256Hex(body).prefix(length)) }

    static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}
