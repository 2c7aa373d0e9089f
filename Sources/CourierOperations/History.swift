import CourierPosix
import CourierSpool
import CourierSupport
import CourierTransport

/// The ledger, read back for people: `why` and `log`.
package struct History {
    let spool: Spool

    package init(spool: Spool) { self.spool = spool }

    /// A filter for `courier log`.
    package struct Filter: Sendable {
        package var since: Timestamp?
        package var until: Timestamp?
        package var subscriber: String?
        package var event: LedgerEvent?
        package var key: String?

        package init(
            since: Timestamp? = nil, until: Timestamp? = nil, subscriber: String? = nil, event: LedgerEvent? = nil,
            key: String? = nil
        ) {
            self.since = since
            self.until = until
            self.subscriber = subscriber
            self.event = event
            self.key = key
        }

        /// Bytes every matching line contains, the most telling first: the
        /// ledger search parses only lines that have them.
        var needle: String? {
            if let key { return "\t" + LedgerLine.escape(key) + "\t" }
            if let subscriber { return "\t" + LedgerLine.escape(subscriber) + "\t" }
            return event.map { "\t" + $0.rawValue + "\t" }
        }

        func matches(_ line: LedgerLine) -> Bool {
            if let since, line.time < since { return false }
            if let until, line.time >= until { return false }
            if let subscriber, line.subscriber != subscriber { return false }
            if let event, line.event != event { return false }
            if let key, line.key != key { return false }
            return true
        }
    }

    package func lines(_ filter: Filter) throws(SpoolError) -> [LedgerLine] {
        var found: [LedgerLine] = []
        try forEachLine(filter) { found.append($0) }
        return found
    }

    /// The lines `filter` matches, oldest first, as they are read.
    package func forEachLine(_ filter: Filter, _ visit: (LedgerLine) -> Void) throws(SpoolError) {
        _ = try Ledger.read(
            from: spool.ledgerDirectory, sinceDay: filter.since?.utcDay, untilDay: filter.until?.utcDay,
            containing: filter.needle
        ) {
            if filter.matches($0) { visit($0) }
        }
    }

    /// Every ledger line of one item, oldest first.
    package func lines(for item: SpoolItem) throws(SpoolError) -> [LedgerLine] {
        try lines(Filter(subscriber: item.ledgerSubscriber, key: item.ledgerKey))
    }
}

/// Plain words for why an item is where it is, and what will happen to
/// it: every piece of advice here is what courier really does.
package enum Explanation {
    package static func explain(_ item: SpoolItem, last: LedgerLine?, context: Context = Context()) -> String {
        switch item.state {
        case .sent:
            return "Delivered: the subscriber answered \(last.map { "HTTP \($0.status)" } ?? "2xx")."
        case .queued:
            return waiting(context)
        case .sending:
            return "A round is sending it now (or died while sending it; the next round puts it back in queued/)."
        case .awaitingRoute:
            let wait = context.routeWait.map { Units.describe($0) } ?? "route-wait"
            return "An outdoor workout waiting for its GPS route record; it goes on when the route arrives, "
                + "and needs attention if none has come \(wait) after it was taken in."
        case .failed:
            return "Failed and acknowledged: never retried automatically; `courier resend` queues it again."
        case .needsAttention:
            guard let last else {
                return "Needs attention: it was moved here by hand. "
                    + "Fix the cause, then `courier resend \(item.name)`, or `courier ack \(item.name)` to accept it."
            }
            if TransientFailure.recorded(in: last) {
                return "Needs attention: \(transientReason(last)). Nothing retries it by itself: "
                    + "`courier send-now --attention` sends it again now, with every other transient failure; "
                    + "`courier resend \(item.name)` queues it for the next round; "
                    + "`courier ack \(item.name)` accepts the failure."
            }
            return "Needs attention: \(attentionReason(last)). "
                + "Fix the cause, then `courier resend \(item.name)`, or `courier ack \(item.name)` to accept the failure."
        }
    }

    /// An entry in queued/: held, deferred, or simply waiting.
    static func waiting(_ context: Context) -> String {
        if let hold = context.hold {
            let why = hold.reason.isEmpty ? "" : " (\(hold.reason))"
            return "Waiting: subscriber \(hold.subscriber) is held since \(hold.since.rfc3339)\(why); "
                + "rounds send it nothing until `courier release \(hold.subscriber)`."
        }
        if let stamp = context.stamp {
            let step = "retry \(stamp.deferrals)" + (context.steps.map { " of \($0)" } ?? "") + " of retry-schedule"
            guard stamp.due > context.now else {
                return "Due again after a transient failure (\(step)): the next round tries it; "
                    + "`courier send-now` tries it now."
            }
            return "Deferred after a transient failure (\(step)): the first background round from "
                + "\(stamp.due.rfc3339) on tries it again; `courier send-now` tries it now."
        }
        return "Waiting for the next round; `courier send-now` sends it at once."
    }

    /// A transient failure in plain words, with what the round did about it.
    static func transientReason(_ line: LedgerLine) -> String {
        let cause = TransientFailure.reason(in: line) ?? (line.answer.status.map { "HTTP \($0)" } ?? line.detail)
        let what: String
        switch line.status {
        case 0: what = "the subscriber did not answer (\(cause))"
        case 200...299: what = "the subscriber did not take it (\(cause))"
        default: what = "the subscriber was unavailable (\(cause))"
        }
        switch TransientFailure(line) {
        case .triedOnce: return what + "; a background round tries once (no retry-schedule)"
        case .retriesExhausted: return what + "; every retry was used"
        case .stoppedByBreaker: return what + "; the round stopped trying it: the subscriber was not answering"
        case nil: return what
        }
    }

    static func attentionReason(_ line: LedgerLine) -> String {
        switch line.event {
        case .invalid:
            return "courier could not accept the file as a record (\(line.detail))"
        case .routeTimeout:
            return "its GPS route did not arrive in time"
        default:
            break
        }
        if let reply = ServerReply(line) { return batchReason(reply) }
        switch line.status {
        case 0:
            return "it was not delivered (\(line.detail.isEmpty ? "no answer" : line.detail))"
        case 400, 422: return "the subscriber rejected the record as malformed (HTTP \(line.status))"
        case 401, 403:
            return
                "the subscriber refused the credentials (HTTP \(line.status)); check token-file and signing-secret-file"
        case 404, 410: return "the subscriber's URL does not exist (HTTP \(line.status)); check url"
        case 409, 412: return "the subscriber reports a conflict (HTTP \(line.status))"
        case 413: return "the record is too large for the subscriber (HTTP 413)"
        case 300...399:
            return "the subscriber answered with a redirect (HTTP \(line.status)), which courier does not follow"
        case 408, 429, 500...599:
            return "the subscriber was unavailable (HTTP \(line.status))"
        default: return "the subscriber answered HTTP \(line.status)"
        }
    }

    /// A batch item's fate in the server's own words.
    static func batchReason(_ reply: ServerReply) -> String {
        let words = reply.message.map { ": \(reply.shown($0))" } ?? ""
        switch reply.status {
        case "CONFLICT":
            return "the subscriber reports a conflict\(words)"
                + (reply.currentETag.map { " (its current etag is \(reply.shown($0)))" } ?? "")
        case "ERROR", "INVALID":
            return "the subscriber refused the record\(words)"
        default:
            return "the subscriber did not take it (\(reply.shown(reply.status))\(words)); "
                + "`courier send-now --attention` sends it again"
        }
    }

    /// What `why` adds for a batch item: what the server said of it last,
    /// and the etag courier keeps for the entity the record writes, which
    /// a later `UPDATE` of that entity names.
    package static func serverNotes(for item: SpoolItem, history: [LedgerLine], in spool: Spool) -> [String] {
        guard let entry = item.entry else { return [] }
        var notes: [String] = []
        let delivery: Set<LedgerEvent> = [.sent, .retry, .needsAttention]
        if let reply = history.last(where: { delivery.contains($0.event) }).flatMap(ServerReply.init) {
            notes.append("the subscriber said: \(reply.summary)")
        }
        // The record names the entity; an unreadable one just has no note.
        if let bytes = try? spool.read(item.name, in: item.state, limit: Self.recordLimit),
            let entity = OptimisticConcurrency.entity(of: bytes),
            let kept = try? EntityTagStore(spool: spool).tag(of: entity, from: entry.subscriber)
        {
            notes.append(
                "etag kept for \(entity) from \(entry.subscriber): \(kept.etag) "
                    + "(given for \(LedgerLine.escape(kept.key)) at \(LedgerLine.escape(kept.time))); "
                    + "an UPDATE of \(entity) names it as \"etag\" (`courier etag \(entity)` prints it)")
        }
        return notes
    }

    /// The largest record a configuration allows (`max-record-size`).
    static let recordLimit = 64 << 20
}
