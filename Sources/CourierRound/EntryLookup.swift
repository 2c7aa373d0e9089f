import CourierIdentifiers
import CourierPosix
import CourierSpool

/// Intake's duplicate check, the question whether an entry name exists in
/// any state folder, answered the cheaper way for the round. A lookup asks
/// six folders and, for a new record, fails in all six: about 25 µs in
/// large folders. A listing of the folders (`StateListing`) costs a
/// fraction of a microsecond per name they hold, and after it only names
/// the listing holds are looked up. So names are looked up until the
/// lookups made would have paid for a listing, by the folders' sizes, and
/// then the folders are listed once: never more than twice the cheaper
/// way's cost, whether a round takes in ten files beside a million sent
/// entries or ten thousand into an empty spool.
///
/// The listing is taken under the serial lock, on a spool with one worker
/// only, and dropped when the lock's epoch shows that another process held
/// the lock since the listing was taken (a command may have made a name);
/// the round's own commits between groups hold it too, and keep the epoch.
/// The names intake makes are added as it plans their commit, and a listing
/// taken while planned commits are still out gets theirs when it is taken:
/// they are not on disk to be listed, and once they are the listing is
/// what says they exist.
struct EntryLookup {
    private var listing: StateListing?
    /// Lookups made without a listing since the last one was dropped.
    private var lookups = 0
    /// What listing the state folders would cost, in directory bytes.
    private var listingBytes: Int?
    /// The serial lock's epoch while it is held, and the epoch the listing
    /// was taken in.
    private var held: UInt64?
    private var listedIn: UInt64?

    /// A failing lookup in six folders costs what listing about 3 KB of
    /// directory does (six lookups of ~4 µs; ~40 bytes a name listed at
    /// ~0.27 µs), measured on ext4 (docs/performance.md).
    static let lookupBytes = 3072

    /// Whether a listing is in use (for tests and the profile).
    var isListing: Bool { listing != nil }

    /// The serial lock was taken for a group: a listing outlives the hold
    /// it was taken in only if no other process held the lock since.
    mutating func locked(_ lock: SerialLock) {
        if let listedIn, lock.epoch != listedIn {
            listing = nil
            self.listedIn = nil
            lookups = 0
        }
        held = lock.epoch
    }

    /// The group's hold ended.
    mutating func unlocked() {
        held = nil
    }

    /// The state and folder holding `name`, as `Spool.find` answers.
    /// `unsettled`: the entries this process has planned and not yet seen
    /// committed, which a listing taken now must hold.
    mutating func find(
        _ name: FileName, in spool: Spool, unsettled: Dictionary<EntryName, [UInt8]>.Keys
    ) throws(SpoolError) -> (state: SpoolState, folder: DirectoryHandle)? {
        if let listing, !listing.mayHold(name) { return nil }
        let found = try spool.find(name)
        if listing == nil {
            lookups += 1
            try listIfCheaper(spool, unsettled: unsettled)
        }
        return found
    }

    /// A name intake made.
    mutating func made(_ name: FileName) {
        listing?.add(name)
    }

    private mutating func listIfCheaper(_ spool: Spool, unsettled: Dictionary<EntryName, [UInt8]>.Keys)
        throws(SpoolError)
    {
        guard held != nil, spool.worker == nil else { return }
        let bytes: Int
        if let known = listingBytes {
            bytes = known
        } else {
            bytes = try spool.stateFolderBytes()
            listingBytes = bytes
        }
        guard lookups * Self.lookupBytes >= bytes else { return }
        var listed = try spool.listStateFolders()
        for entry in unsettled { listed.add(entry.fileName) }
        listing = listed
        listedIn = held
    }
}
