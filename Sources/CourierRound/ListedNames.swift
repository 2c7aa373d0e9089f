import CourierIdentifiers
import CourierPosix

/// `queued/` as a delivery pass reads it: names in directory order, each
/// with its kind and, for an entry, its parsed name. The feed takes them
/// one at a time; intake may look a little further (`droppedAhead`) for
/// the dropped files among the next names, to have them read ahead while
/// it takes the ones before. An error of the listing is thrown where the
/// feed reaches it, not where the look ahead met it.
struct ListedNames {
    struct Listed {
        let name: FileName
        /// What the directory entry said the name is; nil if it did not.
        let kind: FileStatus.Kind?
        /// Nil for a dropped file.
        let entry: EntryName?
        /// The number of its read ahead, once asked for (`droppedAhead`).
        var readAhead: Int?
    }

    private let stream: DirectoryStream
    private var ahead: [Listed] = []
    /// The next of `ahead` to take.
    private var head = 0
    /// The next of `ahead` `droppedAhead` has not looked at.
    private var looked = 0
    private var failure: SystemError?
    private var ended = false

    /// Names read past the one taken, at most: as many as the reader may
    /// be asked for (`DroppedFileReader.maximumDepth`), or it waits for
    /// the loop to come nearer instead of reading ahead.
    static let lookahead = DroppedFileReader.maximumDepth

    init(_ stream: DirectoryStream) {
        self.stream = stream
    }

    /// The next name; nil at the end.
    mutating func next() throws(SystemError) -> Listed? {
        guard head < ahead.count else {
            if let failure {
                self.failure = nil
                throw failure
            }
            return ended ? nil : try list()
        }
        let listed = ahead[head]
        head += 1
        if head == ahead.count || head >= Self.lookahead {
            ahead.removeFirst(head)
            looked = max(0, looked - head)
            head = 0
        }
        return listed
    }

    /// Asks `read` to read ahead the dropped files (regular ones, as
    /// listed) among the names after those taken that no call looked at
    /// before, at most `count`; the listing is read up to `lookahead`
    /// names ahead for them. `read` returns the number of the first read,
    /// which `next` then gives with each name.
    mutating func readAhead(_ count: Int, by read: ([FileName]) -> Int) {
        guard count > 0 else { return }
        while ahead.count - head < Self.lookahead && failure == nil && !ended {
            do {
                guard let listed = try list() else { break }
                ahead.append(listed)
            } catch {
                failure = error
            }
        }
        var names: [FileName] = []
        var asked: [Int] = []
        looked = max(looked, head)
        while looked < ahead.count && names.count < count {
            let listed = ahead[looked]
            if listed.entry == nil && listed.kind == .regular {
                names.append(listed.name)
                asked.append(looked)
            }
            looked += 1
        }
        guard !names.isEmpty else { return }
        let first = read(names)
        for (offset, index) in asked.enumerated() { ahead[index].readAhead = first + offset }
    }

    private mutating func list() throws(SystemError) -> Listed? {
        guard let name = try stream.next() else {
            ended = true
            return nil
        }
        return Listed(name: name, kind: stream.lastKind, entry: EntryName(fileName: name))
    }
}
