import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool
import CourierSupport
import CourierTransport
import Foundation

/// Sends everything in `queued/`: claims each entry into `sending/`,
/// POSTs it — alone, or in batches for `mode = batch` — through one curl
/// multi loop with per-subscriber concurrency, writes the ledger lines,
/// then moves each entry to its final state. Retries of a foreground round
/// wait in `sending/` without holding up anything else.
final class DeliveryPass {
    private let spool: Spool
    private let configuration: Configuration
    private let ledger: Ledger
    private let round: RoundID
    private let mode: RoundMode
    private let log: EventLog
    private let headers: DeliveryHeaders
    /// How much of a single answer to keep: the ledger's 200 bytes, and
    /// enough past them that a secret straddling the cut is redacted whole.
    private let answerCapture: Int
    /// Made on first use: an empty round never initialises curl and TLS.
    private var lazyClient: HTTPClient?
    private var summary: RoundSummary

    private let feed: DirectoryStream
    private var feedDone = false
    private var buffered: [SubscriberName: [EntryName]] = [:]
    private var bufferedCount = 0
    private var active: [SubscriberName: Int] = [:]
    private var inFlight: [Int: Request] = [:]
    private var waiting: [Request] = []
    private var nextTag = 0
    /// The batch size in force per batch subscriber; a timeout halves it.
    private var batchSizes: [SubscriberName: Int] = [:]

    /// Entries read ahead of free slots; bounded so that a million queued
    /// items never sit in memory at once.
    private static let readAhead = 4096
    /// Group commit: finished items wait in sending/ (their slots already
    /// reused) until this many are ready or the oldest has waited this
    /// long; then one ledger fsync and one fsync per folder covers them all.
    private static let commitBatch = 256
    private static let commitDelay: Duration = .milliseconds(10)

    private var pendingLines: [LedgerLine] = []
    private var pendingMoves: [(EntryName, SpoolState)] = []
    private var pendingSince: MonotonicInstant?

    private struct Item {
        let entry: EntryName
        let body: [UInt8]
    }

    /// One POST: a single item, or a batch.
    private struct Request {
        let items: [Item]
        let subscriber: Subscriber
        var attempt: Int
        var due: MonotonicInstant
    }

    init(
        spool: Spool, configuration: Configuration, ledger: Ledger, round: RoundID, mode: RoundMode,
        summary: RoundSummary, log: EventLog = .silent
    ) throws(RoundError) {
        self.spool = spool
        self.configuration = configuration
        self.ledger = ledger
        self.round = round
        self.mode = mode
        self.summary = summary
        self.log = log
        self.headers = DeliveryHeaders(deviceID: configuration.deviceID, session: round.value)
        self.answerCapture = LedgerLine.detailLimit + configuration.redactor.longest
        do { feed = try spool.directory(.queued).entries() } catch {
            throw .spool(.operation("list", path: "queued/", error))
        }
        for subscriber in configuration.subscribers where subscriber.mode == .batch {
            batchSizes[subscriber.name] = subscriber.batch.size
        }
    }

    private func client() throws(RoundError) -> HTTPClient {
        if let lazyClient { return lazyClient }
        let timeout = mode == .foreground ? configuration.foregroundTimeout : configuration.backgroundTimeout
        do {
            let made = try HTTPClient(timeout: timeout)
            lazyClient = made
            return made
        } catch {
            throw .curl(error)
        }
    }

    func run() throws(RoundError) -> RoundSummary {
        while true {
            try startWhatCan()
            if inFlight.isEmpty && waiting.isEmpty && feedDone && bufferedCount == 0 { break }
            let now = MonotonicInstant.now()
            var wait: Duration = .seconds(1)
            if let soonest = waiting.map(\.due).min() { wait = min(wait, max(.zero, soonest - now)) }
            if let since = pendingSince { wait = min(wait, max(.zero, since + Self.commitDelay - now)) }
            let finished: [(tag: Int, response: DeliveryResponse)]
            let client = try client()
            do { finished = try client.collect(wait: wait) } catch { throw .curl(error) }
            try settle(finished)
            if let since = pendingSince,
                pendingLines.count >= Self.commitBatch || MonotonicInstant.now() - since >= Self.commitDelay
                    || inFlight.isEmpty
            {
                try commit()
            }
        }
        try commit()
        for (name, size) in batchSizes { summary.batches[name.value, default: BatchTally()].finalSize = size }
        return summary
    }

    // MARK: starting

    private func hasFreeSlot(_ subscriber: Subscriber) -> Bool {
        active[subscriber.name, default: 0] < subscriber.concurrency
    }

    /// How many entries one request of this subscriber carries.
    private func wanted(by subscriber: Subscriber) -> Int {
        subscriber.mode == .batch ? batchSizes[subscriber.name, default: subscriber.batch.size] : 1
    }

    private func startWhatCan() throws(RoundError) {
        let now = MonotonicInstant.now()
        var index = 0
        while index < waiting.count {
            let request = waiting[index]
            if request.due <= now && hasFreeSlot(request.subscriber) {
                waiting.remove(at: index)
                try launch(request)
            } else {
                index += 1
            }
        }
        // Read a little, start what that allows, and again, until every
        // slot is busy or nothing is left.
        var launched = true
        while launched {
            launched = false
            try readAheadAsNeeded()
            let readingDone = feedDone || bufferedCount >= Self.readAhead
            for subscriber in configuration.subscribers {
                while hasFreeSlot(subscriber), let queue = buffered[subscriber.name], !queue.isEmpty {
                    // A batch waits to fill up while there is more to read.
                    if queue.count < wanted(by: subscriber) && !readingDone { break }
                    let items = try claim(from: subscriber)
                    if !items.isEmpty {
                        try launch(
                            Request(items: items, subscriber: subscriber, attempt: 1, due: MonotonicInstant.now()))
                        launched = true
                    }
                }
            }
        }
    }

    /// Reads queued/ only as far as free slots (and batches) need.
    private func readAheadAsNeeded() throws(RoundError) {
        func hungry() -> Bool {
            configuration.subscribers.contains {
                hasFreeSlot($0) && buffered[$0.name, default: []].count < wanted(by: $0)
            }
        }
        while !feedDone && bufferedCount < Self.readAhead && hungry() {
            let name: FileName?
            do { name = try feed.next() } catch { throw .spool(.operation("list", path: "queued/", error)) }
            guard let name else {
                feedDone = true
                break
            }
            guard let entry = EntryName(fileName: name) else { continue }
            guard configuration.subscriber(named: entry.subscriber) != nil else {
                try setAside(entry)
                continue
            }
            buffered[entry.subscriber, default: []].append(entry)
            bufferedCount += 1
        }
    }

    /// Takes the next request's entries off the buffer and claims each:
    /// queued/ → sending/, then reads it. A name that vanished (a person
    /// moved it) is skipped.
    private func claim(from subscriber: Subscriber) throws(RoundError) -> [Item] {
        var items: [Item] = []
        var bytes = 0
        while items.count < wanted(by: subscriber), var queue = buffered[subscriber.name], !queue.isEmpty {
            let entry = queue[0]
            if subscriber.mode == .batch && !items.isEmpty {
                // max-batch-bytes: the next item starts the next batch.
                let size = (try? spool.directory(.queued).status(of: entry.fileName))??.size ?? 0
                if bytes + size + BatchBody.overheadPerItem > subscriber.batch.maxBytes { break }
            }
            queue.removeFirst()
            buffered[subscriber.name] = queue
            bufferedCount -= 1
            if try refusedAsTwin(entry) { continue }
            do {
                try spool.move(entry.fileName, from: .queued, to: .sending)
            } catch {
                if case .rename(_, _, let errno) = error, errno == .noSuchFile { continue }
                throw .spool(error)
            }
            // An entry gets the checks a dropped file gets, now that it is
            // claimed: a script may have dropped it under an entry name.
            let body: [UInt8]
            switch spool.readChecked(entry.fileName, in: .sending, limit: configuration.maxRecordSize) {
            case .read(let bytes): body = bytes
            case .refused(let reason):
                setAside([entry], subscriber: subscriber, reason: reason)
                continue
            case .vanished:
                log(.warning, "sending/\(entry) was moved away by someone else before it was read; not sent")
                continue
            }
            if let problem = Self.problem(with: body, as: entry) {
                setAside([entry], subscriber: subscriber, reason: problem)
                continue
            }
            bytes += body.count + entry.key.description.utf8.count + BatchBody.overheadPerItem
            items.append(Item(entry: entry, body: body))
        }
        return items
    }

    private func launch(_ request: Request) throws(RoundError) {
        nextTag += 1
        let subscriber = request.subscriber
        var wire: DeliveryRequest
        if subscriber.mode == .batch {
            let body = BatchBody.encode(
                request.items.map { ($0.entry.key.description, $0.body) }, deviceID: configuration.deviceID)
            let url =
                subscriber.batch.atomic
                ? subscriber.url + (subscriber.url.contains("?") ? "&" : "?") + "atomic=true" : subscriber.url
            wire = DeliveryRequest(key: Self.batchKey(request.items), body: body, subscriber: subscriber, url: url)
            wire.answerCapture = 8 << 20
            summary.batches[subscriber.name.value, default: BatchTally()].batches += 1
        } else {
            let item = request.items[0]
            wire = DeliveryRequest(
                key: item.entry.key.description, body: item.body, subscriber: subscriber, url: subscriber.url,
                answerCapture: answerCapture)
            if let tag = OptimisticConcurrency.ifMatch(for: item.body) {
                do { wire.extraHeaders.append(try HTTPHeaderField(name: "If-Match", value: tag)) } catch {
                    setAside(
                        request.items.map(\.entry), subscriber: subscriber,
                        reason: "its `etag`/`version` cannot be sent as If-Match: \(error)")
                    return
                }
            }
        }
        if subscriber.gzip, let compressed = Gzip.compress(wire.body) {
            wire = DeliveryRequest(
                key: wire.key, body: compressed, subscriber: subscriber, url: wire.url,
                extraHeaders: wire.extraHeaders + [Self.gzipEncoding], answerCapture: wire.answerCapture)
        }
        let fields: [HTTPHeaderField]
        do { fields = try headers.fields(for: wire, now: .now()) } catch {
            setAside(request.items.map(\.entry), subscriber: subscriber, reason: "cannot be sent: \(error)")
            return
        }
        let client = try client()
        do {
            try client.start(wire, headers: fields, tag: nextTag)
        } catch {
            throw .curl(error)
        }
        inFlight[nextTag] = request
        active[subscriber.name, default: 0] += 1
    }

    /// An entry is a record whose id is the entry's: intake only makes such
    /// entries, but a script may drop any bytes under an entry's name, and
    /// those must not go out under a key they do not carry.
    static func problem(with body: [UInt8], as entry: EntryName) -> String? {
        switch Record.parse(body, maximumSize: Int.max) {
        case .failure(let problem): return problem.description
        case .success(let record) where record.id != entry.key.id:
            return "its id is \(record.id), not the entry's \(entry.key.id)"
        case .success: return nil
        }
    }

    /// A file dropped straight into queued/ under the name of an entry that
    /// already settled (sent, failed, needing attention) would replace it
    /// and be sent under its key: it is flagged instead, unchanged, as
    /// intake flags a different body under a used id.
    private func refusedAsTwin(_ entry: EntryName) throws(RoundError) -> Bool {
        var settled: SpoolState?
        for state in [SpoolState.sent, .failed, .needsAttention] {
            do {
                if try spool.directory(state).contains(entry.fileName) { settled = state }
            } catch {
                throw .spool(.operation("look up", path: "\(state.rawValue)/\(entry)", error))
            }
        }
        guard let settled else { return false }
        let now = Timestamp.now()
        do throws(SpoolError) {
            let safe = try Intake.safeName(for: entry.fileName, at: now, in: spool.directory(.needsAttention))
            try ledger.append(
                LedgerLine(
                    time: now, round: round.value, subscriber: "-", key: safe.description, event: .invalid,
                    detail: "\(settled.rawValue)/\(entry) already exists; a file dropped under an entry's name "
                        + "cannot replace it (dropped as \(entry))"))
            do {
                try spool.move(entry.fileName, from: .queued, to: .needsAttention, as: safe)
            } catch {
                guard case .rename(_, _, let errno) = error, errno == .noSuchFile else { throw error }
            }
            try spool.sync([.queued, .needsAttention])
            summary.invalid += 1
            summary.attention.append(safe.description)
        } catch {
            throw .spool(error)
        }
        return true
    }

    /// `Content-Encoding: gzip`: a constant, well-formed field.
    private static let gzipEncoding = HTTPHeaderField(constant: "Content-Encoding", "gzip")

    /// Claimed entries that will not be sent: they need attention with the
    /// reason, in the next group commit, and the round goes on.
    private func setAside(_ entries: [EntryName], subscriber: Subscriber, reason: String) {
        let now = Timestamp.now()
        var tally = summary.subscribers[subscriber.name.value, default: SubscriberTally()]
        for entry in entries {
            pendingLines.append(
                LedgerLine(
                    time: now, round: round.value, subscriber: subscriber.name.value, key: entry.key.description,
                    event: .needsAttention, detail: reason))
            pendingMoves.append((entry, .needsAttention))
            tally.needsAttention += 1
            summary.needsAttention += 1
            summary.attention.append(entry.description)
        }
        summary.subscribers[subscriber.name.value] = tally
        if pendingSince == nil { pendingSince = MonotonicInstant.now() }
    }

    /// A batch's own Idempotency-Key: the same entries give the same key,
    /// so a retried batch is recognisable.
    private static func batchKey(_ items: [Item]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in items.map(\.entry.description).joined(separator: "\n").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "batch-" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// An entry for a subscriber that is no longer configured.
    private func setAside(_ entry: EntryName) throws(RoundError) {
        let line = LedgerLine(
            time: .now(), round: round.value, subscriber: entry.subscriber.value, key: entry.key.description,
            event: .needsAttention, detail: "subscriber \(entry.subscriber) is not configured")
        do {
            try ledger.append(line)
            try spool.move(entry.fileName, from: .queued, to: .needsAttention)
            try spool.sync([.queued, .needsAttention])
        } catch {
            if case .rename(_, _, let errno) = error, errno == .noSuchFile { return }
            throw .spool(error)
        }
        summary.needsAttention += 1
        summary.attention.append(entry.description)
    }

    // MARK: finishing

    /// Writes and fsyncs the pending ledger lines, then makes the pending
    /// moves, then fsyncs each touched folder once.
    private func commit() throws(RoundError) {
        guard !pendingLines.isEmpty || !pendingMoves.isEmpty else { return }
        do throws(SpoolError) {
            try ledger.append(pendingLines)
            for (entry, state) in pendingMoves {
                do {
                    try spool.move(entry.fileName, from: .sending, to: state)
                } catch {
                    // A person moved it meanwhile: theirs is the last word.
                    guard case .rename(_, _, let errno) = error, errno == .noSuchFile else { throw error }
                    log(.warning, "sending/\(entry) was moved away by someone else; it stays where they put it")
                }
            }
            try spool.sync(pendingMoves.map(\.1) + [.sending])
        } catch {
            throw .spool(error)
        }
        pendingLines.removeAll(keepingCapacity: true)
        pendingMoves.removeAll(keepingCapacity: true)
        pendingSince = nil
    }

    /// Decides each finished request's items and queues their ledger lines
    /// and moves for the next commit; frees their slots at once.
    private func settle(_ finished: [(tag: Int, response: DeliveryResponse)]) throws(RoundError) {
        guard !finished.isEmpty else { return }
        let now = Timestamp.now()
        var lines: [LedgerLine] = []
        var moves: [(EntryName, SpoolState)] = []
        for (tag, response) in finished {
            guard let request = inFlight.removeValue(forKey: tag) else { continue }
            active[request.subscriber.name, default: 1] -= 1
            let retryAfter = response.retryAfter.flatMap { RetryAfter.parse($0, now: now) }
            let outcome = DeliveryOutcome.classify(
                status: response.status, error: response.error, retryAfter: retryAfter)
            var detail = detail(response)
            var outcomes: [(Item, DeliveryOutcome, String)]
            if request.subscriber.mode == .batch {
                if response.error?.isTimeout == true {
                    let size = max(1, wanted(by: request.subscriber) / 2)
                    batchSizes[request.subscriber.name] = size
                    detail =
                        "batch of \(request.items.count) timed out; batch size now \(size) for this round: " + detail
                }
                outcomes = batchOutcomes(request, outcome: outcome, response: response, detail: detail)
            } else {
                outcomes = [(request.items[0], outcome, detail)]
            }
            var retry: [Item] = []
            var retryDelay: Duration = .zero
            for (item, itemOutcome, itemDetail) in outcomes {
                var line = LedgerLine(
                    time: now, round: round.value, subscriber: request.subscriber.name.value,
                    key: item.entry.key.description, event: .sent, status: response.status, attempt: request.attempt,
                    durationMilliseconds: response.duration.milliseconds, detail: itemDetail)
                var tally = summary.subscribers[request.subscriber.name.value, default: SubscriberTally()]
                switch itemOutcome {
                case .delivered:
                    moves.append((item.entry, .sent))
                    tally.sent += 1
                    summary.sent += 1
                case .retryLater(_, let after)
                where mode == .foreground && request.attempt <= configuration.backoff.count:
                    line.event = .retry
                    retry.append(item)
                    retryDelay = max(retryDelay, max(configuration.backoff[request.attempt - 1], after ?? .zero))
                    tally.retries += 1
                    summary.retries += 1
                case .retryLater(let reason, _), .needsAttention(let reason):
                    line.event = .needsAttention
                    if case .retryLater = itemOutcome, mode == .foreground {
                        line.detail = "retries exhausted (\(reason)): " + line.detail
                    }
                    if reason.hasPrefix("CONFLICT") {
                        summary.batches[request.subscriber.name.value, default: BatchTally()].conflicts += 1
                    }
                    moves.append((item.entry, .needsAttention))
                    tally.needsAttention += 1
                    summary.needsAttention += 1
                    summary.attention.append(item.entry.description)
                }
                summary.subscribers[request.subscriber.name.value] = tally
                lines.append(line)
            }
            if request.subscriber.mode == .batch {
                summary.batches[request.subscriber.name.value, default: BatchTally()].items += request.items.count
            }
            // Retries go out in batches of the size now in force.
            let chunk = max(1, wanted(by: request.subscriber))
            for start in stride(from: 0, to: retry.count, by: chunk) {
                waiting.append(
                    Request(
                        items: Array(retry[start..<min(start + chunk, retry.count)]), subscriber: request.subscriber,
                        attempt: request.attempt + 1, due: MonotonicInstant.now() + retryDelay))
            }
        }
        pendingLines += lines
        pendingMoves += moves
        if pendingSince == nil { pendingSince = MonotonicInstant.now() }
    }

    /// Each item's fate in a batch: the HTTP answer decides for all when it
    /// is not 2xx; otherwise its entry in `results[]` does (`OK` sent,
    /// `CONFLICT` needs attention, anything else or nothing: retried by the
    /// round's rules). An atomic batch is one outcome for all.
    private func batchOutcomes(_ request: Request, outcome: DeliveryOutcome, response: DeliveryResponse, detail: String)
        -> [(Item, DeliveryOutcome, String)]
    {
        guard case .delivered = outcome else { return request.items.map { ($0, outcome, detail) } }
        guard let results = BatchBody.results(in: response.answer) else {
            let missing = DeliveryOutcome.retryLater(reason: "the batch answer has no results[]", after: nil)
            return request.items.map { ($0, missing, "no results[] in the answer: " + detail) }
        }
        func itemOutcome(_ result: BatchBody.Result?) -> DeliveryOutcome {
            switch result?.status {
            case "OK": return .delivered(status: response.status)
            case "CONFLICT": return .needsAttention(reason: "CONFLICT")
            case let other?: return .retryLater(reason: "item status \(other)", after: nil)
            case nil: return .retryLater(reason: "item missing from results[]", after: nil)
            }
        }
        let perItem = request.items.map { item -> (Item, DeliveryOutcome, String) in
            let result = results[item.entry.key.description]
            return (item, itemOutcome(result), result?.text ?? "missing from results[]")
        }
        guard request.subscriber.batch.atomic else { return perItem }
        let combined: DeliveryOutcome
        if perItem.allSatisfy({ if case .delivered = $0.1 { return true } else { return false } }) {
            combined = .delivered(status: response.status)
        } else if perItem.contains(where: { $0.1 == .needsAttention(reason: "CONFLICT") }) {
            combined = .needsAttention(reason: "CONFLICT (atomic batch: nothing was applied)")
        } else {
            combined = .retryLater(reason: "atomic batch not applied", after: nil)
        }
        return perItem.map { ($0.0, combined, $0.2) }
    }

    /// The ledger's ninth column: the answer's first bytes, or the error.
    /// The ledger redacts secrets (a subscriber that echoes its token) and
    /// only then cuts it to 200 bytes.
    private func detail(_ response: DeliveryResponse) -> String {
        let text = String(decoding: response.answer, as: UTF8.self)
        guard let error = response.error else { return text }
        return error.message + (text.isEmpty ? "" : ": " + text)
    }
}
