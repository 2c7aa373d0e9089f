import CourierPosix
import CourierSpool

/// Which kind of round: a background round tries each item once; a
/// foreground round (a person's "send now") retries with backoff.
package enum RoundMode: String, Sendable, Codable {
    case background, foreground
}

/// What one subscriber got in a round.
package struct SubscriberTally: Sendable, Codable, Equatable {
    package var sent = 0
    package var needsAttention = 0
    package var retries = 0
}

/// What one batch subscriber's batches came to in a round.
package struct BatchTally: Sendable, Codable, Equatable {
    package var batches = 0
    package var items = 0
    package var conflicts = 0
    /// The batch size in force at the end (smaller after a timeout).
    package var finalSize = 0
    /// Items in the batches POSTed (each attempt counts); nil in summaries
    /// written before it was kept.
    package var sentItems: Int?

    package var conflictRate: Double { items == 0 ? 0 : Double(conflicts) / Double(items) }

    /// The mean number of items per batch POSTed: the batch size as sent.
    package var sentSize: Double { batches == 0 ? 0 : Double(sentItems ?? 0) / Double(batches) }
}

/// The outcome of one round: printed by `run`, kept in
/// `.courier/last-round.json` for `status`, given to the notifier.
package struct RoundSummary: Sendable, Codable {
    package var round: RoundID
    package var mode: RoundMode
    package var started: String
    package var finished: String = ""
    package var durationMilliseconds: Int64 = 0
    package var recovered = 0
    package var accepted = 0
    package var invalid = 0
    package var duplicates = 0
    package var settling = 0
    package var routesAttached = 0
    package var routeTimeouts = 0
    package var sent = 0
    package var needsAttention = 0
    package var retries = 0
    package var subscribers: [String: SubscriberTally] = [:]
    /// Batch subscribers only.
    package var batches: [String: BatchTally] = [:]
    /// `KEY@SUB` (or the safe name of an invalid file) of every item that
    /// went to needsAttention/ in this round.
    package var attention: [String] = []
    /// OAuth subscribers that got no token, and why; their entries stayed
    /// in queued/. Absent when there were none (and in older summaries).
    package var tokenErrors: [String: String]?
    // What follows is optional so that summaries written before it read
    // back; a round always writes it.
    /// Entries `retry-schedule` put back in queued/ with a later time.
    package var deferred: Int?
    /// Deferred entries a background round passed over: not due yet.
    package var notDue: Int?
    /// Held subscribers, each with the entries the round left in queued/.
    package var held: [String: Int]?
    /// Subscribers the breaker stopped, each with the entries it left
    /// untried in queued/.
    package var notAnswering: [String: Int]?
    /// Transient failures `send-now --attention` took back from
    /// needsAttention/ to send again; nil in other rounds.
    package var fromAttention: Int?
    /// `send-now NAME…`: the entries of `queued/` it left there because
    /// they were not named; nil in other rounds.
    package var notChosen: Int?

    init(round: RoundID, mode: RoundMode, started: Timestamp) {
        self.round = round
        self.mode = mode
        self.started = started.rfc3339
        deferred = 0
        notDue = 0
        held = [:]
        notAnswering = [:]
    }

    /// Counts what intake did.
    mutating func add(_ intake: IntakeReport) {
        accepted += intake.accepted
        invalid += intake.invalid
        duplicates += intake.duplicates
        settling += intake.settling
        attention += intake.flagged
    }

    /// True when the round changed anything a person may care about.
    package var movedAnything: Bool {
        recovered + accepted + invalid + sent + needsAttention + routesAttached + (deferred ?? 0) > 0
    }
}

/// A round either ran, or found another round holding the spool.
package enum RoundResult: Sendable {
    case ran(RoundSummary)
    case busy
}
