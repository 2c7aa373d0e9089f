import CourierIdentifiers
import CourierPosix
import Glibc

/// A folder of the spool that a transition names. `SpoolSession` turns each
/// into its open directory handle.
package enum SpoolPlace: Hashable, Sendable, CustomStringConvertible {
    /// A state folder; `.sending` is this worker's claims.
    case state(SpoolState)
    /// `sending/` itself: entries from before the spool was shared, and
    /// the parent of the workers' folders.
    case sendingRoot
    /// `sending/WORKER/` of another worker (a dead one's, being recovered).
    case claims(of: FileName)
    /// `.courier/`: state files.
    case control
    /// `.courier/held/`.
    case held
    /// `.courier/etags/SUB/`.
    case entityTags(SubscriberName)
    /// `catalogs/NAME/`.
    case catalog(SubscriberName)
    /// `tmp/`: only for removing leftovers.
    case tmp
    /// `ledger/`: only for removing day files prune ages out.
    case ledger

    /// A folder that holds items: a state folder, or a part of `sending/`.
    var isStateFolder: Bool {
        switch self {
        case .state, .sendingRoot, .claims: return true
        case .control, .held, .entityTags, .catalog, .tmp, .ledger: return false
        }
    }

    package var description: String {
        switch self {
        case .state(let state): return state.rawValue + "/"
        case .sendingRoot: return "sending/"
        case .claims(let worker): return "sending/\(worker)/"
        case .control: return ".courier/"
        case .held: return ".courier/held/"
        case .entityTags(let subscriber): return ".courier/etags/\(subscriber)/"
        case .catalog(let name): return "catalogs/\(name)/"
        case .tmp: return "tmp/"
        case .ledger: return "ledger/"
        }
    }
}

/// One durable state change of the spool, as a value: what to write, what
/// to say in the ledger, and which names to move or remove. Every change
/// courier makes is one of these, given to `SpoolSession.commit`, which
/// carries it out in the protocol's one order (docs/design.md §10, "The
/// protocol"). Building one changes nothing; transitions gathered from
/// many items commit as one (`append`).
package struct Transition {
    /// A file to create whole: staged under `tmp/`, made durable, then
    /// renamed into place.
    package struct NewFile {
        package var bytes: [UInt8]
        package var name: FileName
        package var place: SpoolPlace
        /// Less the umask.
        package var mode: mode_t
        /// State files (`.courier/`, catalog items, etags) replace the
        /// previous version; an entry never replaces anything.
        package var replacing: Bool
        /// A modification time for the new file (a hold keeps its since).
        package var modified: Timestamp?
        package var kind: Kind

        /// What a power cut may do to the new file's name.
        package enum Kind {
            /// State: the folders it left and entered are fsynced before
            /// the commit returns.
            case state
            /// A report every round writes again and only people and
            /// `status` read (the last round's summary): its bytes are
            /// durable before its rename, but no folder is fsynced for it,
            /// so a power cut can leave the report before it, whole, never
            /// a torn one. Two fsyncs of every round, an empty one's too.
            case report
        }

        package init(
            _ bytes: [UInt8], as name: FileName, in place: SpoolPlace, mode: mode_t = 0o640, replacing: Bool,
            modified: Timestamp? = nil, kind: Kind = .state
        ) {
            self.bytes = bytes
            self.name = name
            self.place = place
            self.mode = mode
            self.replacing = replacing
            self.modified = modified
            self.kind = kind
        }
    }

    /// What a name in `queued/`, which scripts may rename another file over
    /// or write into, must still be for its move or removal to go ahead: the
    /// file as it was read or chosen.
    package enum Expectation: Sendable {
        /// The same file (device and inode): what a person's `delete` of a
        /// dropped file chose, whatever a script wrote into it since.
        case file(FileStatus)
        /// The same file, not written into since (`isSameVersion`): a dropped
        /// file intake read, whose bytes read are what the ledger says it
        /// accepted, what its entries hold and what is sent.
        case unwritten(FileStatus)

        /// Whether a name whose status is `now` (nil: gone) is still what
        /// this expects.
        package func holds(now: FileStatus?) -> Bool {
            guard let now else { return false }
            switch self {
            case .file(let read): return now.isSameFile(as: read)
            case .unwritten(let read): return now.isSameVersion(as: read)
            }
        }
    }

    /// A rename from one folder to another that never replaces a name. A
    /// file in the way is flagged with its reason (it moves unchanged to
    /// `needsAttention/invalid-…`) and the move goes on; the same file
    /// under both names (a rename a power cut left half done) loses its
    /// old name.
    package struct Move {
        package var name: FileName
        package var from: SpoolPlace
        package var to: SpoolPlace
        package var newName: FileName
        /// Only for state files of `.courier/` (a sync request taken): an
        /// item never replaces anything.
        package var replacing: Bool
        /// What the name must still be, when it is one a script may rename
        /// another file over or write into (a dropped file intake read): one
        /// that is not is left alone, and the move reported as vanished.
        package var expected: Expectation?
        /// The file under the name, opened: its modification time is set to
        /// now just before the move, once `expected` holds (an entry's
        /// modification time is its intake time).
        package var touching: FileDescriptor?

        package init(
            _ name: FileName, from: SpoolPlace, to: SpoolPlace, as newName: FileName? = nil, replacing: Bool = false,
            expected: Expectation? = nil, touching: FileDescriptor? = nil
        ) {
            self.name = name
            self.from = from
            self.to = to
            self.newName = newName ?? name
            self.replacing = replacing
            self.expected = expected
            self.touching = touching
        }

        /// An entry between state folders.
        package init(_ entry: EntryName, from: SpoolState, to: SpoolState) {
            self.init(entry.fileName, from: .state(from), to: .state(to))
        }
    }

    /// A modification time set on a file before it moves.
    package struct Stamp: Sendable {
        package enum Time: Sendable {
            /// An explicit time (a deferral's stamp, or the stamp taken off).
            /// A file courier does not own is first replaced by its own copy.
            case exactly(Timestamp)
            /// Now, where permitted (intake's touch); skipped where not.
            case now
        }

        package var name: FileName
        package var place: SpoolPlace
        package var time: Time

        package init(_ name: FileName, in place: SpoolPlace, to time: Time) {
            self.name = name
            self.place = place
            self.time = time
        }
    }

    /// A name to remove; one already gone counts as removed.
    package struct Removal: Sendable {
        package var name: FileName
        package var place: SpoolPlace
        /// An empty directory under the name is removed too (a sync
        /// request made with `mkdir`).
        package var orEmptyDirectory: Bool
        /// As a move's: a name that is not what it must be is kept.
        package var expected: Expectation?

        package init(
            _ name: FileName, in place: SpoolPlace, orEmptyDirectory: Bool = false, expected: Expectation? = nil
        ) {
            self.name = name
            self.place = place
            self.orEmptyDirectory = orEmptyDirectory
            self.expected = expected
        }
    }

    /// Bytes appended to a journal file of `.courier/` (the ids a full
    /// catalog sync has applied) and fsynced, right after the ledger lines.
    package struct Append {
        package var bytes: [UInt8]
        package var name: FileName
        package var place: SpoolPlace

        package init(_ bytes: [UInt8], to name: FileName, in place: SpoolPlace) {
            self.bytes = bytes
            self.name = name
            self.place = place
        }
    }

    /// Open files already in the spool whose data must reach the disk
    /// before any line or name says what they are (intake's dropped files).
    package var durable: [FileDescriptor] = []
    package var newFiles: [NewFile] = []
    package var lines: [LedgerLine] = []
    package var appends: [Append] = []
    package var tags: [EntityTagUpdate] = []
    package var stamps: [Stamp] = []
    package var moves: [Move] = []
    package var removals: [Removal] = []

    package init() {}

    package init(lines: [LedgerLine] = [], moves: [Move] = [], removals: [Removal] = [], newFiles: [NewFile] = []) {
        self.lines = lines
        self.moves = moves
        self.removals = removals
        self.newFiles = newFiles
    }

    package var isEmpty: Bool {
        durable.isEmpty && newFiles.isEmpty && lines.isEmpty && appends.isEmpty && tags.isEmpty && stamps.isEmpty
            && moves.isEmpty && removals.isEmpty
    }

    /// Whether it makes a name in a state folder appear there: a new entry,
    /// or a move (removals only make names go).
    var changesNames: Bool {
        moves.contains { $0.to.isStateFolder } || newFiles.contains { $0.place.isStateFolder }
    }

    /// Gathers another transition into this one: one commit for both.
    package mutating func append(_ other: Transition) {
        durable += other.durable
        newFiles += other.newFiles
        lines += other.lines
        appends += other.appends
        tags += other.tags
        stamps += other.stamps
        moves += other.moves
        removals += other.removals
    }
}

/// What a commit did that its caller may need to know: the moves whose
/// file had gone (a person moved or removed it first: theirs is the last
/// word), and the files found in the way of a move and flagged.
package struct Committed {
    package var vanished: [Transition.Move] = []
    /// The removals whose file had gone already, or whose name is not
    /// what the removal expected (another file, or one written into since:
    /// left alone): a person's `delete` says the item went away.
    package var absent: [Transition.Removal] = []
    /// The safe names the files in the way got in `needsAttention/`.
    package var flagged: [FileName] = []

    package init() {}
}
