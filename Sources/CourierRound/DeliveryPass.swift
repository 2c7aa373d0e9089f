import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool
import CourierTransport

/// The delivery stage of a round: takes entries from the feed, claims them,
/// builds their requests, starts them on the transport with at most
/// `concurrency` in flight per subscriber, settles what finishes and hands
/// it to the group commit. Retries of a foreground round wait in `sending/`
/// without holding up anything else. Held subscribers, deferred entries not
/// due yet and subscribers the breaker stopped are left in `queued/`
/// (`Admission`). Postfix's qmgr and smtp in one loop.
final class DeliveryPass {
    private let settings: DeliveryPassSettings
    private let round: RoundID
    private let mode: RoundMode
    private let clock: () -> MonotonicInstant
    private let session: SpoolSession
    private let log: EventLog
    private let makeTransport: (Duration) throws(CurlError) -> any Transport
    /// Made on first use: an empty round never initialises curl and TLS.
    private var transport: (any Transport)?
    private var summary: RoundSummary

    private let feed: DeliveryFeed
    private let intake: IntakeSession
    /// What intake did in this pass.
    var intakeReport: IntakeReport { intake.report }
    private let claimer: Claimer
    private let builder: RequestBuilder
    private var settler: Settler
    private let commits: GroupCommit
    private let authorization: DeliveryAuthorization
    private let admission: Admission
    private var breaker: Breaker

    /// `send-now NAME…`: only these entries are sent; every other stays
    /// in `queued/` for the next round. Nil: every entry.
    var chosen: Set<EntryName>? {
        get { admission.chosen }
        set { admission.chosen = newValue }
    }

    /// Called on every turn of the loop, for `status` and a terminal's
    /// progress line (`RunningRound`), which asks for the counts only when
    /// it is time to look.
    var onTick: ((() -> PassCounts) -> Void)?

    private var active = SubscriberTable<Int>()
    private var inFlight: [Int: PendingRequest] = [:]
    private var waiting: [PendingRequest] = []
    private var nextTag = 0
    /// The batch size in force per batch subscriber, from the last round.
    private var batchSizes: BatchSizes

    init(
        session: SpoolSession, settings stages: RoundSettings, round: RoundID, mode: RoundMode,
        summary: RoundSummary, log: EventLog = .silent, schedules: RetrySchedules,
        transport makeTransport: @escaping (Duration) throws(CurlError) -> any Transport = {
            timeout throws(CurlError) in
            try HTTPClient(timeout: timeout)
        },
        clock: @escaping () -> MonotonicInstant = MonotonicInstant.now,
        jitter: @escaping () -> Double = { Double.random(in: 0...1) }
    ) throws(RoundError) {
        self.settings = stages.delivery
        self.round = round
        self.mode = mode
        self.summary = summary
        self.makeTransport = makeTransport
        self.clock = clock
        self.session = session
        self.log = log
        let spool = session.spool
        let taking = Intake(session: session, settings: stages.intake, round: round)
        // Before the commit thread starts: grown later, the table waits
        // for an RCU grace period at each doubling.
        DescriptorTable.reserve(taking.descriptorsAtMost)
        intake = IntakeSession(intake: taking)
        commits = GroupCommit(session: session, log: log)
        feed = try DeliveryFeed(spool: spool, intake: intake, commits: commits)
        claimer = Claimer(session: session, settings: stages.claim, round: round, log: log)
        builder = RequestBuilder(stages.requests, session: round)
        settler = Settler(
            round: round, mode: mode, backoff: stages.settle.backoff, redactor: stages.settle.redactor, jitter: jitter,
            schedules: schedules)
        batchSizes = BatchSizes(stages.batchSizes, spool: spool)
        authorization = DeliveryAuthorization(
            session: session, settings: stages.authorization, log: log, round: round, mode: mode)
        let holds: [Hold]
        do { holds = try spool.holds() } catch { throw .spool(error) }
        admission = Admission(
            spool: spool, settings: stages.admission, mode: mode, holds: holds, schedules: schedules)
        // The round's second pass (for what routes freed) keeps the first's
        // verdicts: a subscriber the breaker stopped gets no more requests
        // in this round. Its entries are counted again as this pass reads
        // them, as the first pass counted them.
        for name in (summary.notAnswering ?? [:]).keys {
            if let subscriber = SubscriberName(name) { admission.stop(subscriber, leaving: 0) }
        }
        breaker = Breaker(stages.breaker)
        feed.arrived = { [unowned self] items in arrive(items) }
        // Tokens come before the serial lock: one slow token endpoint must
        // not hold every worker's intake.
        intake.beforeSerialLock = { [authorization, admission, settings] in
            for subscriber in settings.subscribers
            where subscriber.oauth != nil && admission.isOpen(subscriber.name) {
                _ = authorization.bearer(for: subscriber)
            }
        }
    }

    func run() throws(RoundError) -> RoundSummary {
        // A commit handed to the commit thread before the pass stopped
        // finishes first, and its error is the pass's if it failed.
        do { try deliver() } catch { throw commits.stop(after: error) }
        do { try batchSizes.save(to: session) } catch { throw .spool(error) }
        for (name, size) in batchSizes.all { summary.batches[name.value, default: BatchTally()].finalSize = size }
        summary.tokenErrors = authorization.summary
        for (name, text) in (summary.tokenErrors ?? [:]).sorted(by: { $0.key < $1.key }) {
            log(.error, "subscriber \(name): \(text)")
        }
        summary.notDue = admission.notDue
        // As `held`: a second pass reads all of queued/ again, and counts anew.
        if admission.chosen != nil { summary.notChosen = admission.notChosen }
        summary.held = Dictionary(uniqueKeysWithValues: admission.held.map { ($0.key.value, $0.value) })
        summary.notAnswering = Dictionary(uniqueKeysWithValues: admission.stopped.map { ($0.key.value, $0.value) })
        return summary
    }

    /// The loop, until every entry is settled and committed.
    private func deliver() throws(RoundError) {
        while true {
            try startWhatCan()
            if inFlight.isEmpty && waiting.isEmpty {
                if feed.isEmpty { break }
                // Every subscriber is held or stopped: the rest of queued/
                // is only read to count what stays (and to set aside the
                // entries of subscribers no longer configured).
                if !settings.subscribers.contains(where: { admission.isOpen($0.name) }) {
                    repeat {
                        try fill(while: { true })
                        if feed.intakeGroupsOut > 0 { try commits.waitForRunning() }
                    } while feed.intakeGroupsOut > 0 || (!feed.done && !feed.isSaturated)
                    break
                }
            }
            // Nothing in flight after starting what can: the pass would only
            // wait, so what waits in sending/ is committed first. A collect
            // that happens to finish every request in flight is no reason:
            // the next requests start before the pass looks again.
            if inFlight.isEmpty {
                let groupsOut = feed.intakeGroupsOut
                try commits.commit()
                // What is to be sent next is an intake group still being
                // committed: wait for it, not for an answer. The commit may
                // have waited for it already (a group commit queued behind
                // it), and its entries are in the feed: nothing is in flight
                // to answer, so they start now.
                if groupsOut > 0 {
                    if feed.intakeGroupsOut == groupsOut {
                        try feed.readAhead()
                        prepareTransport()
                        try commits.waitForRunning()
                    }
                    continue
                }
            }
            let now = clock()
            var wait: Duration = .seconds(1)
            // An intake group being committed: its entries start as soon
            // as it is done, not at the next answer. The wait ends when the
            // commit out on the thread finishes (the group's, or one ahead
            // of it, whose end hands the group's); without a signal, it
            // looks again in a millisecond.
            var signal: Int32?
            if feed.intakeGroupsOut > 0 {
                signal = commits.finishedSignal
                if signal == nil { wait = min(wait, .milliseconds(1)) }
            }
            if let soonest = waiting.map(\.due).min() { wait = min(wait, max(.zero, soonest - now)) }
            if let deadline = commits.deadline { wait = min(wait, max(.zero, deadline - now)) }
            let finished: [(tag: Int, response: DeliveryResponse)]
            do { finished = try startedTransport().collect(wait: wait, signal: signal) } catch { throw .curl(error) }
            try settle(finished)
            try commits.check()
            if commits.isDue(at: clock()) { try commits.commit() }
            if let onTick { commits.whenIdle { onTick(counts) } }
        }
        try commits.finish()
        summary.add(intake.report)
    }

    /// What the pass has done so far.
    private func counts() -> PassCounts {
        let intake = intake.report
        return PassCounts(
            sent: summary.sent, needsAttention: summary.needsAttention, deferred: summary.deferred ?? 0,
            settledByIntake: intake.invalid + intake.duplicates, passedOver: admission.passedOver,
            inFlight: inFlight.values.reduce(0) { $0 + $1.items.count },
            retrying: waiting.reduce(0) { $0 + $1.items.count }, claimedAhead: feed.claimedAhead,
            nextRetry: waiting.map(\.due).min().map { max(.zero, $0 - clock()) })
    }

    /// Makes the transport while the loop has nothing to do but wait for
    /// an intake group's commit that brings entries to send: loading
    /// libcurl and its libraries takes the loop 10 ms and more, and the
    /// round's first commit writes back what the producers dropped, a
    /// tenth of a second and more, which the load now hides in. A failure
    /// is left for the first request to report, as before.
    private func prepareTransport() {
        guard transport == nil, feed.claimedAhead > 0 else { return }
        _ = try? startedTransport()
    }

    private func startedTransport() throws(CurlError) -> any Transport {
        if let transport { return transport }
        let made = try makeTransport(settings.timeout(in: mode))
        transport = made
        return made
    }

    // MARK: starting

    /// Held and stopped subscribers have none.
    private func hasFreeSlot(_ subscriber: Subscriber) -> Bool {
        active[subscriber.name, default: 0] < subscriber.concurrency && admission.isOpen(subscriber.name)
    }

    private func fill(while hungry: () -> Bool) throws(RoundError) {
        // Most turns have nothing to read: they do not wait for a commit.
        guard intake.hasPending || (!feed.done && !feed.isSaturated && (feed.intakeRunsLow || hungry())) else {
            return
        }
        func read() throws(RoundError) {
            try feed.fill(
                while: hungry,
                isConfigured: { settings.subscriber(named: $0) != nil },
                unconfigured: { entry throws(RoundError) in
                    if try claimer.setAsideUnconfigured(entry) { noteAttention(entry) }
                },
                admit: admission.admit, sendNow: sendsNow)
        }
        // With requests in flight the loop has answers to see to: it reads
        // when no commit holds the session, and waits for none. While one
        // does, it reads dropped files ahead, for when it is done.
        if !inFlight.isEmpty {
            if try !commits.exclusiveIfFree(read) { try feed.readAhead() }
        } else {
            if commits.isBusy { try feed.readAhead() }
            try commits.exclusive(read)
        }
    }

    /// Entries a committed intake group took into `sending/`: into the
    /// feed, or, for a subscriber the breaker stopped since the group was
    /// planned, back to `queued/` as `stop` puts back what was read ahead.
    private func arrive(_ items: [DeliveryItem]) {
        var stopped: [SubscriberName: [DeliveryFeed.Item]] = [:]
        var open: [DeliveryItem] = []
        for item in items {
            if admission.isOpen(item.entry.subscriber) {
                open.append(item)
            } else {
                stopped[item.entry.subscriber, default: []].append(.claimed(item))
            }
        }
        feed.add(open)
        for (name, left) in stopped {
            guard let subscriber = settings.subscriber(named: name) else { continue }
            admission.stop(name, leaving: left.count)
            putBack(left, subscriber: subscriber, because: "\(name) not answering")
        }
    }

    /// A subscriber's token. Fetching one uses the session (its token
    /// file), so an OAuth subscriber's waits for a commit running
    /// meanwhile. (Intake, already holding the session, asks
    /// `authorization` itself.)
    private func bearer(for subscriber: Subscriber) throws(RoundError) -> DeliveryAuthorization.Bearer {
        guard subscriber.oauth != nil else { return .notNeeded }
        var bearer = DeliveryAuthorization.Bearer.notNeeded
        try commits.exclusive { bearer = authorization.bearer(for: subscriber) }
        return bearer
    }

    /// Whether an entry intake makes goes straight to `sending/`: its
    /// subscriber is neither held nor stopped, and has a token if it needs
    /// one (fetched now, as its first request would). One that stays in
    /// `queued/` is counted as if the pass had read it there.
    private func sendsNow(_ entry: EntryName) -> Bool {
        guard let subscriber = settings.subscriber(named: entry.subscriber) else { return false }
        guard admission.isOpen(entry.subscriber), admission.isChosen(entry) else {
            _ = admission.admit(entry)
            return false
        }
        if case .unavailable = authorization.bearer(for: subscriber) {
            authorization.leave(1, queuedFor: subscriber.name)
            return false
        }
        return true
    }

    /// How many entries one request of this subscriber carries.
    private func wanted(by subscriber: Subscriber) -> Int {
        subscriber.mode == .batch ? batchSizes.size(of: subscriber) : 1
    }

    private func startWhatCan() throws(RoundError) {
        let now = clock()
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
        // slot is busy or nothing is left. Entries taken and not sent (a
        // twin flagged, a bad one set aside, a name gone: on a shared spool,
        // to another worker) are progress too: with nothing in flight, the
        // pass would otherwise wait a second for an answer before reading on.
        var progressed = true
        while progressed {
            progressed = false
            try fill(while: {
                settings.subscribers.contains {
                    hasFreeSlot($0) && feed.waiting(for: $0.name) < wanted(by: $0)
                }
            })
            for subscriber in settings.subscribers {
                if feed.waiting(for: subscriber.name) > 0, case .unavailable = try bearer(for: subscriber) {
                    leaveQueued(subscriber)
                    continue
                }
                while hasFreeSlot(subscriber), feed.waiting(for: subscriber.name) > 0 {
                    // A batch waits to fill up while there is more to read.
                    if feed.waiting(for: subscriber.name) < wanted(by: subscriber) && !feed.isSaturated { break }
                    // Takes at least one entry from the feed.
                    let items = try claimItems(for: subscriber)
                    if !items.isEmpty {
                        try launch(PendingRequest(items: items, subscriber: subscriber, attempt: 1, due: clock()))
                    }
                    progressed = true
                }
            }
        }
    }

    /// The next request's entries, claimed. In batch mode `max-batch-bytes`
    /// ends a batch early: an item that would pass it starts the next one,
    /// and one that passes it alone needs attention (`BatchFit`).
    private func claimItems(for subscriber: Subscriber) throws(RoundError) -> [DeliveryItem] {
        var items: [DeliveryItem] = []
        var fit = BatchFit(limit: subscriber.batch.maxBytes, deviceID: settings.deviceID)
        while items.count < wanted(by: subscriber), let next = feed.peek(subscriber.name) {
            // Before a claim, a guess by the file's size; after it, the
            // item's exact size decides.
            if subscriber.mode == .batch, !items.isEmpty, case .queued(let entry) = next {
                var size = 0
                try commits.exclusive { size = claimer.queuedSize(of: entry) }
                if !fit.mayHold(recordSize: size, key: entry.key.description) { break }
            }
            _ = feed.take(subscriber.name)
            let item: DeliveryItem
            switch next {
            case .claimed(let claimed):
                item = claimed
            case .queued(let entry):
                var claim = Claimer.Claim.vanished
                try commits.exclusive { () throws(RoundError) in claim = try claimer.claim(entry) }
                switch claim {
                case .claimed(let claimed):
                    item = claimed.stamped(admission.takeStamp(of: entry))
                case .refused(let entry, let reason):
                    setAside([entry], subscriber: subscriber, reason: reason)
                    continue
                case .flaggedTwin(let safe):
                    summary.invalid += 1
                    summary.attention.append(safe.description)
                    continue
                case .vanished:
                    continue
                }
            }
            if subscriber.mode == .batch {
                switch fit.add(item, first: items.isEmpty) {
                case .added:
                    break
                case .full:
                    feed.putFront(item)
                    return items
                case .refused(let reason):
                    setAside([item.entry], subscriber: subscriber, reason: reason)
                    continue
                }
            }
            items.append(item)
        }
        return items
    }

    /// Entries of a subscriber without a token stay in `queued/`, unclaimed,
    /// for the next round.
    private func leaveQueued(_ subscriber: Subscriber) {
        let left = feed.discard(subscriber.name)
        putBack(left, subscriber: subscriber, because: "no token for \(subscriber.name)")
        authorization.leave(left.count, queuedFor: subscriber.name)
    }

    /// Items read ahead for a subscriber the pass will not send to after
    /// all: those intake took straight into `sending/` go back to `queued/`,
    /// as recovery would put them, in the next group commit.
    private func putBack(_ left: [DeliveryFeed.Item], subscriber: Subscriber, because reason: String) {
        let now = Timestamp.now()
        var transition = Transition()
        for case .claimed(let item) in left {
            transition.lines.append(
                LedgerLine(
                    time: now, actor: .round(round), subscriber: subscriber.name, key: item.entry.key.description,
                    event: .recovered, detail: "\(reason); back to queued/"))
            transition.moves.append(.init(item.entry, from: .sending, to: .queued))
        }
        hand(transition, at: clock())
    }

    /// A transition for the next group commit. What goes (back) to
    /// `queued/` while the feed's stream runs is already counted or
    /// settled by this pass: the stream passes over it.
    private func hand(_ transition: Transition, at now: MonotonicInstant) {
        passOver(transition.moves[...])
        commits.add(transition, at: now)
    }

    /// An answer settled into the next group commit, in place.
    private func settle(
        _ request: PendingRequest, _ response: DeliveryResponse, now: Timestamp, stopped: Bool
    ) -> Settler.Settled {
        let subscriber = request.subscriber
        return commits.gather(at: clock()) { transition in
            let movedBefore = transition.moves.count
            let settled = settler.settle(
                request, response, batchSize: wanted(by: subscriber), now: now, stopped: stopped, into: &summary,
                committing: &transition)
            passOver(transition.moves[movedBefore...])
            return settled
        }
    }

    private func passOver(_ moves: ArraySlice<Transition.Move>) {
        for move in moves where move.to == .state(.queued) {
            if let entry = EntryName(fileName: move.newName) { feed.passOver(entry) }
        }
    }

    private func launch(_ request: PendingRequest) throws(RoundError) {
        var request = request
        let subscriber = request.subscriber
        var bearer: String?
        switch try self.bearer(for: subscriber) {
        case .notNeeded:
            break
        case .token(let token, let generation):
            bearer = token
            request.tokenGeneration = generation
        case .unavailable(let error):
            // Already claimed (a retry, or sent again after a 401): it needs
            // attention, with the reason.
            setAside(request.items.map(\.entry), subscriber: subscriber, reason: error.description)
            return
        }
        switch builder.build(request, now: .now(), bearer: bearer) {
        case .refused(let reason):
            setAside(request.items.map(\.entry), subscriber: subscriber, reason: reason)
        case .ready(let wire, let headers):
            nextTag += 1
            do { try startedTransport().start(wire, headers: headers, tag: nextTag) } catch { throw .curl(error) }
            if subscriber.mode == .batch {
                var tally = summary.batches[subscriber.name.value, default: BatchTally()]
                tally.batches += 1
                tally.sentItems = (tally.sentItems ?? 0) + request.items.count
                summary.batches[subscriber.name.value] = tally
            }
            inFlight[nextTag] = request
            active[subscriber.name, default: 0] += 1
        }
    }

    // MARK: finishing

    /// Claimed entries that will not be sent: they need attention with the
    /// reason, in the next group commit, and the round goes on.
    private func setAside(_ entries: [EntryName], subscriber: Subscriber, reason: String) {
        let now = Timestamp.now()
        let lines = entries.map { entry in
            LedgerLine(
                time: now, actor: .round(round), subscriber: subscriber.name, key: entry.key.description,
                event: .needsAttention, detail: reason)
        }
        hand(
            Transition(lines: lines, moves: entries.map { .init($0, from: .sending, to: .needsAttention) }), at: clock()
        )
        summary.subscribers[subscriber.name.value, default: SubscriberTally()].needsAttention += entries.count
        for entry in entries { noteAttention(entry) }
    }

    private func noteAttention(_ entry: EntryName) {
        summary.needsAttention += 1
        summary.attention.append(entry.description)
    }

    /// A timeout has halved the size already; an answer counts towards
    /// growing it back; anything else starts that count over.
    private func adjustBatchSize(
        of subscriber: Subscriber, after response: DeliveryResponse, _ settled: Settler.Settled
    ) {
        if let size = settled.halvedBatchSize {
            batchSizes.shrink(subscriber, to: size)
        } else if response.error == nil, (200...299).contains(response.status) {
            if let size = batchSizes.answered(subscriber) {
                log(
                    .notice,
                    "batch size for \(subscriber.name) back up to \(size) after \(BatchSizes.streak) answered batches")
            }
        } else {
            batchSizes.failed(subscriber)
        }
    }

    /// Settles each finished request, frees its slot at once, queues its
    /// retries, and hands its lines and moves to the group commit.
    private func settle(_ finished: [(tag: Int, response: DeliveryResponse)]) throws(RoundError) {
        guard !finished.isEmpty else { return }
        let now = Timestamp.now()
        // Out of open files for a socket: the process's limit, not the
        // subscriber's silence. No attempt is counted; the round settles
        // the rest of these answers and stops (they are still committed:
        // `GroupCommit.stop`), and the request's items stay in sending/
        // for the next round's recovery, under the same key.
        var ownLimit: SpoolError?
        for (tag, response) in finished {
            guard let request = inFlight.removeValue(forKey: tag) else { continue }
            let subscriber = request.subscriber
            active[subscriber.name, default: 1] -= 1
            if let limit = response.ownLimit {
                if ownLimit == nil {
                    ownLimit = .operation("open a socket for subscriber", path: subscriber.name.value, limit)
                }
                continue
            }
            // A 401 to an OAuth subscriber forgets its token file.
            var goesAgain = false
            if response.status == 401 && subscriber.oauth != nil {
                try commits.exclusive { goesAgain = authorization.sendsAgain(request, after: response) }
            }
            if goesAgain {
                var again = request
                again.attempt += 1
                again.reauthorised = true
                again.due = clock()
                waiting.append(again)
                summary.retries += request.items.count
                summary.subscribers[subscriber.name.value, default: SubscriberTally()].retries += request.items.count
                hand(Transition(lines: authorization.retryLines(request, response, now: now)), at: clock())
                continue
            }
            if breaker.record(response, for: subscriber.name) { stop(subscriber, now: now) }
            // Tokens fetched since the last answer are redacted from results too.
            settler.redactor = authorization.redactor
            let settled = settle(request, response, now: now, stopped: !admission.isOpen(subscriber.name))
            if subscriber.mode == .batch { adjustBatchSize(of: subscriber, after: response, settled) }
            // Retries go out in batches of the size now in force.
            let chunk = max(1, wanted(by: subscriber))
            for start in stride(from: 0, to: settled.retry.count, by: chunk) {
                waiting.append(
                    PendingRequest(
                        items: Array(settled.retry[start..<min(start + chunk, settled.retry.count)]),
                        subscriber: subscriber, attempt: request.attempt + 1, due: clock() + settled.retryDelay,
                        lastResponse: response))
            }
        }
        if let ownLimit { throw .spool(ownLimit) }
    }

    /// The breaker opened: no new request to the subscriber for the rest
    /// of the round. What was read ahead for it stays in `queued/`, and its
    /// retries waiting in `sending/` are settled by the answer they last
    /// got, as if their retries had run out (`retry-schedule` still
    /// applies to them). Requests in flight finish and settle as usual.
    private func stop(_ subscriber: Subscriber, now: Timestamp) {
        let left = feed.discard(subscriber.name)
        admission.stop(subscriber.name, leaving: left.count)
        putBack(left, subscriber: subscriber, because: "\(subscriber.name) not answering")
        log(
            .warning,
            "\(subscriber.name) not answering: \(breaker.limit(for: subscriber.name) ?? 0) requests in a row got no "
                + "answer; no more requests to it in this round, its other entries stay in queued/")
        let stranded = waiting.filter { $0.subscriber.name == subscriber.name }
        waiting.removeAll { $0.subscriber.name == subscriber.name }
        for request in stranded {
            guard let last = request.lastResponse else {
                // Nothing to settle it by: it goes back untried, as recovery would put it.
                let lines = request.items.map {
                    LedgerLine(
                        time: now, actor: .round(round), subscriber: subscriber.name, key: $0.entry.key.description,
                        event: .recovered, detail: "\(subscriber.name) not answering; back to queued/")
                }
                hand(
                    Transition(lines: lines, moves: request.items.map { .init($0.entry, from: .sending, to: .queued) }),
                    at: clock())
                continue
            }
            var tried = request
            tried.attempt -= 1
            _ = settle(tried, last, now: now, stopped: true)
        }
    }
}
