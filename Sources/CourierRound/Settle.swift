import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierRecords
import CourierSpool
import CourierSupport
import CourierTransport

/// What one attempt means for one item of a request.
struct ItemVerdict {
    let item: DeliveryItem
    let outcome: DeliveryOutcome
    /// The server refused the item's version (a batch result `CONFLICT`).
    let conflict: Bool
    let detail: String
    /// What a batch server said of the item.
    var result: BatchBody.Result?
}

/// A batch result's `status`, as the wire format spells it.
enum BatchItemStatus: Equatable {
    case ok
    case conflict
    /// The server refused the item itself (`ERROR`, and the reference
    /// sink's older `INVALID`): sending the same bytes again gets the same
    /// answer, as with a 4xx.
    case refused(String)
    case other(String)

    init(_ text: String) {
        switch text {
        case "OK": self = .ok
        case "CONFLICT": self = .conflict
        case "ERROR", "INVALID": self = .refused(text)
        default: self = .other(text)
        }
    }
}

/// Settling: a finished request's answer becomes each item's fate (sent,
/// retried, deferred, needs attention — qmail's K, Z and D), its ledger
/// line, and the move the group commit will make. Foreground rounds retry
/// on the backoff schedule (batches: `BatchBackoff`), or after a longer
/// Retry-After; background rounds never do. A transient failure that a
/// round will not retry goes back to `queued/` for a later round when the
/// subscriber has a `retry-schedule` with steps left, and needs attention
/// otherwise.
struct Settler {
    let round: RoundID
    let mode: RoundMode
    let backoff: [Duration]
    /// Batch results are redacted value by value, before each is cut short
    /// (OAuth tokens join it as the round fetches them).
    var redactor: Redactor
    /// Where in its range a batch retry's wait falls: 0…1.
    let jitter: () -> Double
    /// `retry-schedule`, read once for the round: none on a spool that
    /// cannot keep deferral stamps, whose failures then need attention.
    let schedules: RetrySchedules

    /// What settling an answer means for the round itself; what it means
    /// for the spool is added to the next commit's transition.
    struct Settled {
        var retry: [DeliveryItem] = []
        var retryDelay: Duration = .zero
        /// A batch that timed out halves the subscriber's batch size.
        var halvedBatchSize: Int?
    }

    /// `stopped`: the breaker has stopped the round's requests to this
    /// subscriber, so nothing is retried in this round. The lines, the
    /// stamps on the files in `sending/`, the etags and the moves out of it
    /// go into `transition`, the group commit's own: a round settles one
    /// answer per record it sends, and a transition of its own for each,
    /// copied into the commit's, cost more than building its lines.
    func settle(
        _ request: PendingRequest, _ response: DeliveryResponse, batchSize: Int, now: Timestamp,
        stopped: Bool = false, into summary: inout RoundSummary, committing transition: inout Transition
    ) -> Settled {
        var settled = Settled()
        func move(_ entry: EntryName, to state: SpoolState) {
            transition.moves.append(Transition.Move(entry, from: .sending, to: state))
        }
        func setStamp(_ entry: EntryName, _ time: Timestamp) {
            transition.stamps.append(Transition.Stamp(entry.fileName, in: .state(.sending), to: .exactly(time)))
        }
        let subscriber = request.subscriber
        let retryAfter = response.retryAfter.flatMap { RetryAfter.parse($0, now: now) }
        let outcome = DeliveryOutcome.classify(status: response.status, error: response.error, retryAfter: retryAfter)
        var detail = Self.detail(response)
        var tally = summary.subscribers[subscriber.name.value, default: SubscriberTally()]
        let step = retryStep(request)
        // The time every etag of this answer is kept with, written once.
        var tagTime: String?
        func settleItem(_ verdict: ItemVerdict) {
            var line = LedgerLine(
                time: now, actor: .round(round), subscriber: subscriber.name,
                key: verdict.item.entry.key.description, event: .sent, answer: LedgerAnswer(column: response.status),
                attempt: request.attempt, durationMilliseconds: response.duration.milliseconds, detail: verdict.detail)
            let retriesHere = mode == .foreground && request.attempt <= backoff.count
            switch verdict.outcome {
            case .delivered:
                move(verdict.item.entry, to: .sent)
                if verdict.result?.etag != nil {
                    let time = tagTime ?? now.rfc3339
                    tagTime = time
                    if let tag = keptTag(verdict, rfc3339: time) { transition.tags.append(tag) }
                }
                tally.sent += 1
                summary.sent += 1
            case .retryLater(_, let after) where retriesHere && !stopped:
                line.event = .retry
                settled.retry.append(verdict.item)
                settled.retryDelay = max(settled.retryDelay, max(step, after ?? .zero))
                tally.retries += 1
                summary.retries += 1
            case .retryLater(let reason, _):
                if let stamp = deferral(of: verdict.item, subscriber: subscriber, retryAfter: retryAfter, now: now) {
                    line.event = .deferred
                    let brief = TransientFailure.brief(reason, answer: line.detail)
                    let steps = schedules.schedule(of: subscriber.name)?.count ?? 0
                    line.detail = Self.deferredDetail(stamp, steps: steps, reason: brief) + line.detail
                    move(verdict.item.entry, to: .queued)
                    setStamp(verdict.item.entry, stamp.modified)
                    summary.deferred = (summary.deferred ?? 0) + 1
                } else {
                    let words: TransientFailure =
                        verdict.item.stamp != nil || (mode == .foreground && !retriesHere)
                        ? .retriesExhausted : mode == .foreground ? .stoppedByBreaker : .triedOnce
                    line.event = .needsAttention
                    line.detail = words.detail(reason: reason, line.detail)
                    needsAttention(verdict, &transition, &tally, &summary)
                }
            case .needsAttention(let reason):
                line.event = .needsAttention
                // Courier's words first, so that no answer's text can pass
                // for them (`TransientFailure`). A batch item's detail is
                // courier's `name=value` fields already.
                if verdict.result == nil { line.detail = TransientFailure.refusedDetail(reason: reason, line.detail) }
                needsAttention(verdict, &transition, &tally, &summary)
            }
            // A stamp is taken off when an entry leaves the schedule, so that
            // a resend or a backfill starts the schedule again.
            if let stamp = verdict.item.stamp, line.event != .deferred && line.event != .retry {
                setStamp(verdict.item.entry, DeferralStamp.cleared(stamp.modified))
            }
            transition.lines.append(line)
        }
        if subscriber.mode == .batch {
            if response.error?.isTimeout == true {
                let size = BatchSizes.halved(batchSize)
                settled.halvedBatchSize = size
                detail = "batch of \(request.items.count) timed out; batch size now \(size): " + detail
            }
            let verdicts = Self.batchVerdicts(
                request, outcome: outcome, response: response, detail: detail, redactor: redactor)
            summary.batches[subscriber.name.value, default: BatchTally()].items += request.items.count
            for verdict in verdicts { settleItem(verdict) }
        } else {
            // One item: no array of one verdict per answer.
            settleItem(ItemVerdict(item: request.items[0], outcome: outcome, conflict: false, detail: detail))
        }
        summary.subscribers[subscriber.name.value] = tally
        return settled
    }

    /// The wait before this request's next attempt, Retry-After aside: the
    /// attempt's `backoff` step, or for a batch the jittered exponential
    /// wait (drawn once per request, so its items go out together again).
    func retryStep(_ request: PendingRequest) -> Duration {
        guard mode == .foreground, request.attempt <= backoff.count else { return .zero }
        guard request.subscriber.mode == .batch else { return backoff[request.attempt - 1] }
        return BatchBackoff.delay(attempt: request.attempt, base: backoff[0], jitter: jitter())
    }

    private func needsAttention(
        _ verdict: ItemVerdict, _ transition: inout Transition, _ tally: inout SubscriberTally,
        _ summary: inout RoundSummary
    ) {
        let subscriber = verdict.item.entry.subscriber.value
        if verdict.conflict { summary.batches[subscriber, default: BatchTally()].conflicts += 1 }
        transition.moves.append(Transition.Move(verdict.item.entry, from: .sending, to: .needsAttention))
        tally.needsAttention += 1
        summary.needsAttention += 1
        summary.attention.append(verdict.item.entry.description)
    }

    /// When a transient failure is tried next under `retry-schedule`: the
    /// next step's wait, or the server's longer `Retry-After`; nil when the
    /// subscriber has no schedule or it has run out. A `Retry-After` is
    /// honoured up to the longest step (at least the 300 s a round waits):
    /// a server asking for more than the operator allows is asking for a
    /// person when the steps run out.
    func deferral(of item: DeliveryItem, subscriber: Subscriber, retryAfter: Duration?, now: Timestamp)
        -> DeferralStamp?
    {
        guard let schedule = schedules.schedule(of: subscriber.name) else { return nil }
        let done = item.stamp?.deferrals ?? 0
        guard done < schedule.count else { return nil }
        let cap = max(schedule.max() ?? .zero, DeliveryOutcome.retryAfterCap)
        let wait = max(schedule[done], min(retryAfter ?? .zero, cap))
        return DeferralStamp(due: now + wait, deferrals: done + 1)
    }

    /// `next attempt 2026-12-01T10:05:00.000Z, retry 1 of 5 (HTTP 503): `
    static func deferredDetail(_ stamp: DeferralStamp, steps: Int, reason: String) -> String {
        "next attempt \(stamp.due.rfc3339), retry \(stamp.deferrals) of \(steps) (\(reason)): "
    }

    /// Each item's fate in a batch: the HTTP answer decides for all when it
    /// is not 2xx; otherwise its entry in `results[]` does (`OK` sent,
    /// `CONFLICT` and `ERROR` need attention, anything else or nothing:
    /// retried by the round's rules). An atomic batch is one outcome for all,
    /// by the same rule: all `OK` sent, any `CONFLICT` or `ERROR` (which the
    /// same batch would get again) all need attention, otherwise all retry.
    static func batchVerdicts(
        _ request: PendingRequest, outcome: DeliveryOutcome, response: DeliveryResponse, detail: String,
        redactor: Redactor
    ) -> [ItemVerdict] {
        guard case .delivered = outcome else {
            return request.items.map { ItemVerdict(item: $0, outcome: outcome, conflict: false, detail: detail) }
        }
        guard let results = BatchBody.results(in: response.answer) else {
            let missing = DeliveryOutcome.retryLater(
                reason: "the batch answer has no results[] courier can read", after: nil)
            return request.items.map {
                ItemVerdict(
                    item: $0, outcome: missing, conflict: false,
                    detail: "no results[] courier can read (or the answer is not one JSON value): " + detail)
            }
        }
        let perItem = request.items.map { item -> ItemVerdict in
            guard let result = results[item.entry.key.description] else {
                let missing = DeliveryOutcome.retryLater(reason: "item missing from results[]", after: nil)
                return ItemVerdict(item: item, outcome: missing, conflict: false, detail: "missing from results[]")
            }
            let said = result.ledgerDetail(redactor: redactor)
            let outcome: DeliveryOutcome
            switch BatchItemStatus(result.status) {
            case .ok: outcome = .delivered(status: response.status)
            case .conflict: outcome = .needsAttention(reason: "CONFLICT")
            case .refused(let status): outcome = .needsAttention(reason: status)
            case .other(let status): outcome = .retryLater(reason: "item status \(status)", after: nil)
            }
            return ItemVerdict(
                item: item, outcome: outcome, conflict: BatchItemStatus(result.status) == .conflict, detail: said,
                result: result)
        }
        guard request.subscriber.batch.atomic else { return perItem }
        let allDelivered = perItem.allSatisfy { if case .delivered = $0.outcome { true } else { false } }
        let anyConflict = perItem.contains { $0.conflict }
        let refused = perItem.lazy.compactMap { verdict -> String? in
            guard let result = verdict.result, case .refused(let status) = BatchItemStatus(result.status) else {
                return nil
            }
            return status
        }.first
        let combined: DeliveryOutcome =
            allDelivered
            ? .delivered(status: response.status)
            : anyConflict
                ? .needsAttention(reason: "CONFLICT (atomic batch: nothing was applied)")
                : refused.map { .needsAttention(reason: "\($0) (atomic batch: nothing was applied)") }
                    ?? .retryLater(reason: "atomic batch not applied", after: nil)
        return perItem.map {
            ItemVerdict(item: $0.item, outcome: combined, conflict: anyConflict, detail: $0.detail, result: $0.result)
        }
    }

    /// The etag to keep for a delivered item's entity: one the server gave,
    /// that a record can name and courier can send back as `If-Match`.
    /// One that holds a secret is not kept anywhere (the ledger shows it
    /// redacted): state files are redacted like the ledger.
    func keptTag(_ verdict: ItemVerdict, rfc3339 time: String) -> EntityTagUpdate? {
        guard let result = verdict.result, let etag = result.etag, EntityTag.isKeepable(etag),
            EntityTagSyntax.accepts(etag), redactor.redact(etag) == etag
        else { return nil }
        let entity = verdict.item.fields.entityID
        let serverID = result.serverID.map { DetailFields.cut(redactor.redact($0), to: EntityTag.maximumLength) }
        return EntityTagUpdate(
            subscriber: verdict.item.entry.subscriber, entity: entity,
            tag: EntityTag(etag: etag, serverID: serverID, key: verdict.item.entry.key.description, rfc3339: time))
    }

    /// The ledger's ninth column: the answer's first bytes, or the error.
    /// The ledger redacts secrets (a subscriber that echoes its token) and
    /// only then cuts it to 200 bytes.
    static func detail(_ response: DeliveryResponse) -> String {
        let text = String(decoding: response.answer, as: UTF8.self)
        guard let error = response.error else { return text }
        return error.message + (text.isEmpty ? "" : ": " + text)
    }
}
