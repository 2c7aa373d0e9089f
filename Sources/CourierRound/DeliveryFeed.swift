import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool

/// The feed of a delivery pass: `queued/` read in directory order, only as
/// far ahead as free slots and batches need, kept per subscriber. Entries
/// wait there by name, to be claimed; dropped files met on the way are
/// taken in by intake in groups, and those the pass will send arrive
/// claimed, with their bytes. Bounded in names and bytes, so a million
/// queued items never sit in memory at once.
final class DeliveryFeed {
    enum Item {
        /// An entry in `queued/`, to be claimed.
        case queued(EntryName)
        /// Taken in this round straight into `sending/`.
        case claimed(DeliveryItem)

        var entry: EntryName {
            switch self {
            case .queued(let entry): entry
            case .claimed(let item): item.entry
            }
        }
    }

    /// One subscriber's items in arrival order.
    typealias Queue = FrontQueue<Item>

    private let stream: DirectoryStream
    /// Names taken from the stream ahead of their turn (`readAhead`), in
    /// the stream's order, with what the listing said of each; dropped
    /// files among them opened and parsed already.
    private var ahead = FrontQueue<Ahead>()
    private var streamEnded = false
    private var filesAhead = 0
    private var bytesAhead = 0

    private struct Ahead {
        let name: FileName
        let kind: FileStatus.Kind?
        let read: Intake.ReadAhead?
    }
    private let intake: IntakeSession?
    /// Where intake groups are committed, on the commit thread; nil: here.
    private let commits: GroupCommit?
    /// Intake groups handed to `commits` and not committed yet, and the
    /// entries and bytes they will add: counted against the read-ahead
    /// limits as if they were here.
    private(set) var intakeGroupsOut = 0
    private var arriving = 0
    private var arrivingBytes = 0
    /// Where entries a committed intake group took into `sending/` go
    /// (the pass's check that their subscriber is still sent to); nil:
    /// straight into the feed.
    var arrived: (([DeliveryItem]) -> Void)?
    private var buffered = SubscriberTable<Queue>()
    private(set) var done = false
    private(set) var count = 0
    /// Bytes of the claimed items waiting.
    private var bytes = 0
    /// Claimed items waiting: in `sending/` already, so a count of
    /// `queued/` does not see them.
    private var claimedCount = 0
    /// Fingerprints of the entries this pass put in `queued/` while its
    /// stream ran — those intake left there (held subscribers) and claimed
    /// ones it put back (the breaker, a missing token, a deferral) — so
    /// that the stream, which may or may not return names made after it
    /// was opened, does not count or take them a second time.
    private var madeByPass: Set<Int> = []

    /// Entries read ahead of free slots.
    static let limit = 4096
    /// Bytes of claimed items read ahead of free slots.
    static let byteLimit = 8 << 20

    /// Groups handed and not committed at once, at most: reading goes on
    /// while one commits and the next fills.
    static let intakeGroupsAhead = 2

    /// Without `intake`, dropped files are passed over (tests of delivery
    /// alone). With `commits`, intake groups commit there while the feed
    /// reads on; their entries come back through `arrived`.
    init(spool: Spool, intake: IntakeSession? = nil, commits: GroupCommit? = nil) throws(RoundError) {
        do { stream = try spool.directory(.queued).entries() } catch {
            throw .spool(SpoolError(error))
        }
        self.intake = intake
        self.commits = commits
    }

    var isEmpty: Bool { done && count == 0 && intakeGroupsOut == 0 }
    /// Entries in `sending/` not yet in a request: claimed items waiting
    /// here, and those the intake groups out will bring (`RoundProgress.left`).
    var claimedAhead: Int { claimedCount + arriving }
    /// Nothing more will be read this time: the end, or a read-ahead limit.
    var isSaturated: Bool {
        done || count + arriving >= Self.limit || bytes + arrivingBytes >= Self.byteLimit
    }

    func waiting(for subscriber: SubscriberName) -> Int { buffered[subscriber]?.count ?? 0 }

    func peek(_ subscriber: SubscriberName) -> Item? {
        buffered[subscriber]?.peek()
    }

    func take(_ subscriber: SubscriberName) -> Item? {
        guard let item = buffered[subscriber]?.take() else { return nil }
        count -= 1
        if case .claimed(let claimed) = item {
            bytes -= claimed.body.count
            claimedCount -= 1
        }
        return item
    }

    /// A claimed item the pass took but could not fit in the batch it was
    /// filling: the first of the subscriber's next request.
    func putFront(_ item: DeliveryItem) {
        buffered[item.entry.subscriber, default: Queue()].putFront(.claimed(item))
        count += 1
        bytes += item.body.count
        claimedCount += 1
    }

    /// Forgets what was read ahead for a subscriber the round stopped
    /// sending to. Returns it: entries stay in `queued/`, claimed items
    /// must be put back there.
    func discard(_ subscriber: SubscriberName) -> [Item] {
        let queue = buffered.removeValue(forKey: subscriber) ?? Queue()
        let dropped = queue.waiting
        count -= dropped.count
        for case .claimed(let item) in dropped {
            bytes -= item.body.count
            claimedCount -= 1
        }
        return dropped
    }

    /// The names met last are dropped files, and fewer than a group behind
    /// a commit of them wait to be sent or are on their way: the next group
    /// is taken in now, so that it commits while these are sent. Read only
    /// when a slot is free, it was read as the last of them started, and the
    /// loop then ran dry waiting for its commit. (Entries already in
    /// `queued/` need no commit: they are read only as slots need them.)
    /// Bytes count too, a quarter of a group's (1 MiB): records of 1 MiB
    /// are then taken in ahead only when none waits, and their memory stays
    /// where it was (scripts/torture.sh; docs/performance.md).
    var intakeRunsLow: Bool {
        meetsDroppedFiles && claimedAhead < (intake?.groupSizeBehindCommit ?? 0)
            && bytes + arrivingBytes < Intake.groupBytes / 4
    }
    private var meetsDroppedFiles = false

    /// Reads names while `hungry` says a subscriber could use more, an
    /// intake group is filling, or intake runs low (`intakeRunsLow`).
    /// Entries whose subscriber is not configured go to `unconfigured`;
    /// entries `admit` turns down stay in `queued/` (it counts them). A
    /// dropped file goes to intake; a full group is committed, entries
    /// `sendNow` picks arriving claimed; it counts the others, which stay
    /// in `queued/`.
    func fill(
        while hungry: () -> Bool, isConfigured: (SubscriberName) -> Bool,
        unconfigured: (EntryName) throws(RoundError) -> Void, admit: (EntryName) -> Bool = { _ in true },
        sendNow: (EntryName) -> Bool = { _ in true }
    ) throws(RoundError) {
        while !done && !isSaturated && intakeGroupsOut < Self.intakeGroupsAhead && intake?.holdIsDone != true
            && (hungry() || intake?.hasPending == true || intakeRunsLow)
        {
            guard let next = try nextName() else {
                done = true
                break
            }
            let name = next.name
            guard let entry = EntryName(fileName: name) else {
                meetsDroppedFiles = true
                try takeIn(name, kind: next.kind, readAhead: next.read, sendNow: sendNow)
                continue
            }
            meetsDroppedFiles = false
            if !madeByPass.isEmpty, madeByPass.remove(entry.fileName.hashValue) != nil { continue }
            guard isConfigured(entry.subscriber) else {
                try unconfigured(entry)
                continue
            }
            guard admit(entry) else { continue }
            append(.queued(entry))
        }
        if intake?.hasPending == true { try commitIntake(sendNow: sendNow) }
    }

    /// Takes names from the stream ahead of their turn while the session
    /// is busy with a commit (nothing here uses it): dropped files among
    /// them are opened, read and parsed, so that once the commit is done
    /// `fill` has only to decide on them. Bounded by what intake allows
    /// (`IntakeSession.mayReadAhead`) and by one group's count in names.
    func readAhead() throws(RoundError) {
        guard let intake else { return }
        while !streamEnded && ahead.count < intake.groupSizeBehindCommit
            && intake.mayReadAhead(files: filesAhead, bytes: bytesAhead, groupsOut: intakeGroupsOut)
        {
            let name: FileName?
            do { name = try stream.next() } catch { throw .spool(SpoolError(error)) }
            guard let name else {
                streamEnded = true
                return
            }
            let kind = stream.lastKind
            let read = EntryName(fileName: name) == nil ? intake.readAhead(name, kind: kind) : nil
            if let read {
                filesAhead += 1
                bytesAhead += read.record.bytes.count
            }
            ahead.append(Ahead(name: name, kind: kind, read: read))
        }
    }

    /// The next name: one read ahead, or the stream's.
    private func nextName() throws(RoundError) -> Ahead? {
        if let next = ahead.take() {
            if let read = next.read {
                filesAhead -= 1
                bytesAhead -= read.record.bytes.count
            }
            return next
        }
        guard !streamEnded else { return nil }
        let name: FileName?
        do { name = try stream.next() } catch { throw .spool(SpoolError(error)) }
        guard let name else {
            streamEnded = true
            return nil
        }
        return Ahead(name: name, kind: stream.lastKind, read: nil)
    }

    /// An entry the pass puts (back) in `queued/`, already counted or
    /// settled: the stream, if it returns it, passes over it.
    func passOver(_ entry: EntryName) {
        if !done { madeByPass.insert(entry.fileName.hashValue) }
    }

    private func takeIn(
        _ name: FileName, kind: FileStatus.Kind?, readAhead: Intake.ReadAhead?, sendNow: (EntryName) -> Bool
    ) throws(RoundError) {
        guard let intake else { return }
        do { try intake.offer(name, kind: kind, readAhead: readAhead) } catch { throw .spool(error) }
        if intake.isFull(behindCommit: commits?.isBusy == true) { try commitIntake(sendNow: sendNow) }
    }

    private func commitIntake(sendNow: (EntryName) -> Bool) throws(RoundError) {
        guard let intake else { return }
        let sendsNow = { (entry: EntryName) in
            if sendNow(entry) { return true }
            self.passOver(entry)
            return false
        }
        guard let commits else {
            do { add(try intake.commit(sendNow: sendsNow)) } catch { throw .spool(error) }
            return
        }
        guard let handing = intake.plan(sendNow: sendsNow) else { return }
        let expected = handing.claimed
        intakeGroupsOut += 1
        arriving += expected.items
        arrivingBytes += expected.bytes
        try intake.hand(
            handing, to: commits,
            arrived: { [unowned self] items in
                intakeGroupsOut -= 1
                arriving -= expected.items
                arrivingBytes -= expected.bytes
                if let arrived { arrived(items) } else { add(items) }
            })
    }

    /// Entries intake took straight into `sending/`, with their bytes.
    func add(_ claimed: [DeliveryItem]) {
        for item in claimed {
            append(.claimed(item))
            bytes += item.body.count
            claimedCount += 1
        }
    }

    private func append(_ item: Item) {
        buffered[item.entry.subscriber, default: Queue()].append(item)
        count += 1
    }
}
