import Foundation

/// Sends everything in `queued/`: claims each entry into `sending/`,
/// POSTs it through one curl multi loop with per-subscriber concurrency,
/// writes the ledger line, then moves it to its final state. Retries of a
/// foreground round wait in `sending/` without holding up anything else.
final class DeliveryPass {
    private let spool: Spool
    private let configuration: Configuration
    private let ledger: Ledger
    private let round: RoundID
    private let mode: RoundMode
    private let client: HTTPClient
    private var summary: RoundSummary

    private let feed: DirectoryStream
    private var feedDone = false
    private var buffered: [SubscriberName: [EntryName]] = [:]
    private var bufferedCount = 0
    private var active: [SubscriberName: Int] = [:]
    private var inFlight: [Int: InFlight] = [:]
    private var waiting: [InFlight] = []
    private var nextTag = 0

    /// Entries read ahead of free slots; bounded so that a million queued
    /// items never sit in memory at once.
    private static let readAhead = 4096

    private struct InFlight {
        let entry: EntryName
        let subscriber: Subscriber
        let body: [UInt8]
        var attempt: Int
        var due: MonotonicInstant
    }

    init(
        spool: Spool, configuration: Configuration, ledger: Ledger, round: RoundID, mode: RoundMode,
        summary: RoundSummary
    ) throws(RoundError) {
        self.spool = spool
        self.configuration = configuration
        self.ledger = ledger
        self.round = round
        self.mode = mode
        self.summary = summary
        let timeout = mode == .foreground ? configuration.foregroundTimeout : configuration.backgroundTimeout
        do {
            client = try HTTPClient(timeout: timeout, deviceID: configuration.deviceID, session: round.value)
        } catch {
            throw .curl(error)
        }
        do { feed = try spool.directory(.queued).entries() } catch {
            throw .spool(.operation("list", path: "queued/", error))
        }
    }

    func run() throws(RoundError) -> RoundSummary {
        while true {
            try startWhatCan()
            if inFlight.isEmpty && waiting.isEmpty && feedDone && bufferedCount == 0 { break }
            let now = MonotonicInstant.now()
            var wait: Duration = .seconds(1)
            if let soonest = waiting.map(\.due).min() { wait = min(wait, max(.zero, soonest - now)) }
            let finished: [(tag: Int, response: DeliveryResponse)]
            do { finished = try client.collect(wait: wait) } catch { throw .curl(error) }
            try settle(finished)
        }
        return summary
    }

    // MARK: starting

    private func hasFreeSlot(_ subscriber: Subscriber) -> Bool {
        active[subscriber.name, default: 0] < subscriber.concurrency
    }

    private func startWhatCan() throws(RoundError) {
        let now = MonotonicInstant.now()
        var index = 0
        while index < waiting.count {
            let item = waiting[index]
            if item.due <= now && hasFreeSlot(item.subscriber) {
                waiting.remove(at: index)
                try launch(item)
            } else {
                index += 1
            }
        }
        for subscriber in configuration.subscribers {
            while hasFreeSlot(subscriber), var queue = buffered[subscriber.name], !queue.isEmpty {
                let entry = queue.removeFirst()
                buffered[subscriber.name] = queue
                bufferedCount -= 1
                try claim(entry, for: subscriber)
            }
        }
        while !feedDone && bufferedCount < Self.readAhead {
            let name: FileName?
            do { name = try feed.next() } catch { throw .spool(.operation("list", path: "queued/", error)) }
            guard let name else {
                feedDone = true
                break
            }
            guard let entry = EntryName(fileName: name) else { continue }
            guard let subscriber = configuration.subscriber(named: entry.subscriber) else {
                try setAside(entry)
                continue
            }
            if hasFreeSlot(subscriber) {
                try claim(entry, for: subscriber)
            } else {
                buffered[entry.subscriber, default: []].append(entry)
                bufferedCount += 1
                if configuration.subscribers.allSatisfy({ !hasFreeSlot($0) }) { break }
            }
        }
    }

    /// queued/ → sending/, then start the POST. A name that vanished
    /// (a person moved it) is skipped.
    private func claim(_ entry: EntryName, for subscriber: Subscriber) throws(RoundError) {
        do {
            try spool.move(entry.fileName, from: .queued, to: .sending)
        } catch {
            if case .rename(_, _, let errno) = error, errno == .noSuchFile { return }
            throw .spool(error)
        }
        let body: [UInt8]
        do {
            body = try spool.read(entry.fileName, in: .sending, limit: configuration.maxRecordSize + 1)
        } catch {
            throw .spool(error)
        }
        try launch(InFlight(entry: entry, subscriber: subscriber, body: body, attempt: 1, due: MonotonicInstant.now()))
    }

    private func launch(_ item: InFlight) throws(RoundError) {
        nextTag += 1
        let request = DeliveryRequest(
            entry: item.entry, body: item.body, subscriber: item.subscriber, attempt: item.attempt)
        do {
            try client.start(request, tag: nextTag, now: .now())
        } catch {
            throw .curl(error)
        }
        inFlight[nextTag] = item
        active[item.subscriber.name, default: 0] += 1
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

    /// One wave of completions: every ledger line written and synced once,
    /// then every move, then each touched folder synced once.
    private func settle(_ finished: [(tag: Int, response: DeliveryResponse)]) throws(RoundError) {
        guard !finished.isEmpty else { return }
        let now = Timestamp.now()
        var lines: [LedgerLine] = []
        var moves: [(EntryName, SpoolState)] = []
        for (tag, response) in finished {
            guard var item = inFlight.removeValue(forKey: tag) else { continue }
            active[item.subscriber.name, default: 1] -= 1
            let retryAfter = response.retryAfter.flatMap { RetryAfter.parse($0, now: now) }
            let outcome = DeliveryOutcome.classify(
                status: response.status, error: response.error, retryAfter: retryAfter)
            var line = LedgerLine(
                time: now, round: round.value, subscriber: item.subscriber.name.value, key: item.entry.key.description,
                event: .sent, status: response.status, attempt: item.attempt,
                durationMilliseconds: response.duration.milliseconds, detail: detail(response, item.subscriber))
            var tally = summary.subscribers[item.subscriber.name.value, default: SubscriberTally()]
            switch outcome {
            case .delivered:
                moves.append((item.entry, .sent))
                tally.sent += 1
                summary.sent += 1
            case .retryLater(_, let after) where mode == .foreground && item.attempt <= configuration.backoff.count:
                line.event = .retry
                let delay = max(configuration.backoff[item.attempt - 1], after ?? .zero)
                item.attempt += 1
                item.due = MonotonicInstant.now() + delay
                waiting.append(item)
                tally.retries += 1
                summary.retries += 1
            case .retryLater(let reason, _), .needsAttention(let reason):
                line.event = .needsAttention
                if case .retryLater = outcome, mode == .foreground {
                    line.detail = "retries exhausted (\(reason)): " + line.detail
                }
                moves.append((item.entry, .needsAttention))
                tally.needsAttention += 1
                summary.needsAttention += 1
                summary.attention.append(item.entry.description)
            }
            summary.subscribers[item.subscriber.name.value] = tally
            lines.append(line)
        }
        do {
            try ledger.append(lines)
            for (entry, state) in moves { try spool.move(entry.fileName, from: .sending, to: state) }
            try spool.sync(moves.map(\.1) + [.sending])
        } catch {
            throw .spool(error)
        }
    }

    /// The ledger's ninth column: the answer's first bytes, or the error.
    /// A subscriber that echoes its token back never gets it into the ledger.
    private func detail(_ response: DeliveryResponse, _ subscriber: Subscriber) -> String {
        var text = String(decoding: response.answer, as: UTF8.self)
        if let error = response.error { text = error.message + (text.isEmpty ? "" : ": " + text) }
        if let token = subscriber.token, !token.isEmpty {
            text = text.replacingOccurrences(of: token, with: "[redacted]")
        }
        return text
    }
}
