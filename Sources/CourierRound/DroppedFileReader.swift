import CourierPosix
import CourierRecords
import CourierSpool
import Glibc

/// Reads dropped files ahead of intake on a thread of its own: opens,
/// checks, reads and parses them while the round's loop, bound by its own
/// CPU as it drives the transfers, goes on (floor_mt's intake thread). It
/// only reads. What a file comes to (an entry, a duplicate, a flag, left to
/// settle) is still decided by intake on the loop, under the serial lock
/// and the session gate; a file whose read went any other way than a
/// record parsed is read again there, by the full rules.
///
/// A read is used only if nobody has written to its file since, and, unless
/// it was asked under the serial lock's epoch intake holds when it takes
/// it (`SerialLock.epoch`: no other process held the lock between, so none
/// took the file in meanwhile), only if the dropped name still names the
/// file read (`Intake.holds`). Otherwise intake would take a producer's
/// rewritten file under its old bytes, or call a duplicate what another
/// worker took in while it was read.
///
/// Asks are numbered; intake takes them in that order, once each. When
/// intake comes to a file the reader has not begun, intake reads it itself
/// and the reader skips it; only a read under way is waited for, so that
/// in a burst of dropped files the two share the reads, and neither reads
/// a file the other has.
final class DroppedFileReader {
    /// A dropped file read whole and parsed: what intake's own read gives.
    struct Read {
        let record: Record
        let file: FileDescriptor
        let status: FileStatus?
        /// The serial lock's epoch it was asked under; nil: none yet.
        let epoch: UInt64?
    }

    /// Files asked for and not taken, at most: each holds an open file once
    /// read (`Intake.readAheadDepth`).
    let depth: Int
    /// The largest `depth`: two of intake's larger groups, the most a
    /// pass reads in one go before it turns to its transfers. With 64 the
    /// reader was idle while the loop sent, and fell behind in each burst.
    static let maximumDepth = 2048
    /// Bytes of reads done and not taken by intake past which no new read
    /// starts: these and one record at most are held ahead. A round of 150
    /// records of 1 MiB peaked at 60–62 MiB with 4 MiB here, 53–55 with
    /// 1 MiB, 49–50 without a reader; at 2 KB a record, 1 MiB is 500 files
    /// ahead, and a round sent as many records a second as with 4 MiB.
    static let byteLimit = 1 << 20
    /// Asks made at once, at least: the reader is woken once for them.
    static let batch = 8

    private let shared: Shared
    private let thread: pthread_t
    /// The number the next ask gets.
    private var nextAsk = 0
    /// Asks below this are taken or passed over.
    private var nextTake = 0
    /// Reads handed over and not taken yet, in ask order (`head` on).
    private var received: [Done] = []
    private var head = 0
    /// Bytes of the reads taken or passed over since the last hand-over:
    /// the reader counts them as held until then.
    private var bytesLeft = 0

    private init(shared: Shared, thread: pthread_t, depth: Int) {
        self.shared = shared
        self.thread = thread
        self.depth = depth
    }

    /// Nil for a `depth` of 0, or when no thread can be made: intake then
    /// reads each file itself.
    static func start(queued: DirectoryHandle, maximumSize: Int, depth: Int) -> DroppedFileReader? {
        guard depth > 0 else { return nil }
        let shared = Shared(queued: queued, maximumSize: maximumSize)
        guard let thread = PassThread.start({ shared.serve() }) else { return nil }
        return DroppedFileReader(shared: shared, thread: thread, depth: depth)
    }

    deinit {
        shared.withLock { $0.stopping = true }
        pthread_cond_signal(shared.asked)
        pthread_join(thread, nil)
    }

    /// How many more files may be asked for now.
    var room: Int { depth - (nextAsk - nextTake) }

    /// Reads `names` ahead, in order, for intake, which last held the serial
    /// lock at `epoch`; returns the number of the first ask (the others
    /// follow it). No more than `room`.
    func ask(_ names: [FileName], epoch: UInt64?) -> Int {
        let first = nextAsk
        guard !names.isEmpty else { return first }
        nextAsk += names.count
        shared.withLock { state in
            for (offset, name) in names.enumerated() {
                state.waiting.append(Ask(number: first + offset, name: name, epoch: epoch))
            }
        }
        pthread_cond_signal(shared.asked)
        return first
    }

    /// The read of ask `number`, once done if it is under way; nil if the
    /// reader has not begun it (it will skip it: intake reads the file
    /// itself), or it came to anything but a parsed record. Asks before it
    /// are passed over.
    func take(_ number: Int) -> Read? {
        guard number >= nextTake else { return nil }
        nextTake = number + 1
        if let done = received(number) {
            makeRoom()
            return done.read
        }
        // What the reader has handed over since, once it is past `number`.
        let handed = shared.handOver(through: number, bytesLeft: bytesLeft)
        bytesLeft = 0
        received = head < received.count ? Array(received[head...]) + handed : handed
        head = 0
        // Room for bytes: a reader that waited for it reads on.
        pthread_cond_signal(shared.asked)
        let done = received(number)
        makeRoom()
        return done?.read
    }

    /// Gives the reader room for the bytes intake has taken, once they are
    /// half its limit: as intake takes them, not only at a hand-over.
    private func makeRoom() {
        guard bytesLeft >= Self.byteLimit / 2 else { return }
        shared.withLock { $0.bytesHeld -= bytesLeft }
        bytesLeft = 0
        pthread_cond_signal(shared.asked)
    }

    /// Waits until every ask is read, or the reader waits for intake to
    /// take some (the byte limit); for tests, which would otherwise race
    /// the reader.
    func waitForReads() { shared.waitForReads() }

    /// Bytes the reader counts as held ahead; for tests.
    var bytesHeld: Int { shared.withLock { $0.bytesHeld } }

    /// Ask `number`'s read from those in hand, passing older ones.
    private func received(_ number: Int) -> Done? {
        while head < received.count, received[head].number <= number {
            let done = received[head]
            head += 1
            bytesLeft += done.bytes
            if done.number == number { return done }
        }
        return nil
    }

    private struct Ask {
        let number: Int
        let name: FileName
        let epoch: UInt64?
    }

    private struct Done {
        let number: Int
        let read: Read?

        var bytes: Int { read?.record.bytes.count ?? 0 }
    }

    /// `@unchecked Sendable`: `state` is only touched holding `mutex`; the
    /// folder handle is only read (openat on its descriptor); what a read
    /// makes (an open file, a record) is handed whole to the loop and not
    /// kept.
    private final class Shared: @unchecked Sendable {
        struct State {
            /// Asked, in order, not taken on by the reader.
            var waiting: [Ask] = []
            /// The ask being read now.
            var reading: Int?
            /// Read, in order, not yet handed to intake.
            var done: [Done] = []
            /// Bytes of the reads made and not yet taken or passed over by
            /// intake, handed over or not.
            var bytesHeld = 0
            /// Intake has passed every ask up to this one.
            var skipThrough = -1
            /// Intake waits for `reading` to be done.
            var intakeWaits = false
            var stopping = false
        }

        let queued: DirectoryHandle
        let maximumSize: Int
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        /// Signalled for asks, for room made, and to stop.
        let asked = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        /// Signalled when a read intake waits for is done.
        private let read = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        private var state = State()

        init(queued: DirectoryHandle, maximumSize: Int) {
            self.queued = queued
            self.maximumSize = maximumSize
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(asked, nil)
            pthread_cond_init(read, nil)
        }

        deinit {
            pthread_cond_destroy(asked)
            pthread_cond_destroy(read)
            pthread_mutex_destroy(mutex)
            asked.deallocate()
            read.deallocate()
            mutex.deallocate()
        }

        /// The reads done, for intake, which has come to ask `number`:
        /// waits for it if it is being read; asks up to it not begun are
        /// skipped.
        func handOver(through number: Int, bytesLeft: Int) -> [Done] {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            state.skipThrough = number
            state.bytesHeld -= bytesLeft
            while state.reading == number {
                state.intakeWaits = true
                pthread_cond_wait(read, mutex)
            }
            state.intakeWaits = false
            let done = state.done
            state.done.removeAll(keepingCapacity: true)
            return done
        }

        func withLock<Result>(_ body: (inout State) -> Result) -> Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return body(&state)
        }

        func waitForReads() {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            while state.reading != nil
                || (!state.waiting.isEmpty && state.bytesHeld < DroppedFileReader.byteLimit)
            {
                state.intakeWaits = true
                pthread_cond_wait(read, mutex)
            }
            state.intakeWaits = false
        }

        func serve() {
            var finished: Done?
            while let ask = next(after: finished) {
                finished = Done(number: ask.number, read: Self.read(ask, in: queued, maximumSize: maximumSize))
            }
        }

        /// Hands `finished` over, and takes on the next ask intake has not
        /// passed, once there is one and room for its bytes; nil to stop.
        /// One lock for both.
        private func next(after finished: Done?) -> Ask? {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            if let finished {
                state.done.append(finished)
                state.bytesHeld += finished.bytes
                state.reading = nil
                if state.intakeWaits { pthread_cond_signal(read) }
            }
            while !state.stopping {
                let passed = state.waiting.prefix { $0.number <= state.skipThrough }.count
                if passed > 0 { state.waiting.removeFirst(passed) }
                if !state.waiting.isEmpty && state.bytesHeld < DroppedFileReader.byteLimit {
                    let ask = state.waiting.removeFirst()
                    state.reading = ask.number
                    return ask
                }
                pthread_cond_wait(asked, mutex)
            }
            return nil
        }

        /// What intake's read of a regular file comes to when all is well;
        /// nil for anything else (intake reads that one again itself).
        private static func read(_ ask: Ask, in queued: DirectoryHandle, maximumSize: Int) -> Read? {
            guard
                let opened = try? Spool.openChecked(ask.name, in: queued, limit: maximumSize),
                case .read(let bytes) = opened.read, let file = opened.file,
                case .success(let record) = Record.parse(bytes, maximumSize: maximumSize)
            else { return nil }
            return Read(record: record, file: file, status: opened.opened, epoch: ask.epoch)
        }
    }
}
