import CourierPosix
import CourierSpool

/// Which kind of round: a background round tries each item once; a
/// foreground round (a person's "send now") retries with backoff.
public enum RoundMode: String, Sendable, Codable {
    case background, foreground
}

/// What one subscriber got in a round.
public struct SubscriberTally: Sendable, Codable, Equatable {
    public var sent = 0
    public var needsAttention = 0
    public var retries = 0
}

/// What one batch subscriber's batches came to in a round.
public struct BatchTally: Sendable, Codable, Equatable {
    public var batches = 0
    public var items = 0
    public var conflicts = 0
    /// The batch size in force at the end (smaller after a timeout).
    public var finalSize = 0
    /// Items in the batches POSTed (each attempt counts); nil in summaries
    /// written before it was kept.
    public var sentItems: Int?

    public var conflictRate: Double { items == 0 ? 0 : Double(conflicts) / Double(items) }

    /// The mean number of items per batch POSTed: the batch size as sent.
    public var sentSize: Double { batches == 0 ? 0 : Double(sentItems ?? 0) / Double(batches) }
}

/// The outcome of one round: printed by `run`, kept in
/// `.courier/last-round.json` for `status`, given to the notifier.
public struct RoundSummary: Sendable, Codable {
    public var round: RoundID
    public var mode: RoundMode
    public var started: String
    public var finished: String = ""
    public var durationMilliseconds: Int64 = 0
    public var recovered = 0
    public var accepted = 0
    public var invalid = 0
    public var duplicates = 0
    public var settling = 0
    public var routesAttached = 0
    public var routeTimeouts = 0
    public var sent = 0
    public var needsAttention = 0
    public var retries = 0
    public var subscribers: [String: SubscriberTally] = [:]
    /// Batch subscribers only.
    public var batches: [String: BatchTally] = [:]
    /// `KEY@SUB` (or the safe name of an invalid file) of every item that
    /// went to needsAttention/ in this round.
    public var attention: [String] = []
    /// OAuth subscribers that got no token, and why; their entries stayed
    /// in queued/. Absent when there were none (and in older summaries).
    public var tokenErrors: [String: String]?
    // What follows is optional so that summaries written before it read
    // back; a round always writes it.
    /// Entries `retry-schedule` put back in queued/ with a later time.
    public var deferred: Int?
    /// Deferred entries a background round passed over: not due yet.
    public var notDue: Int?
    /// Held subscribers, each with the entries the round left in queued/.
    public var held: [String: Int]?
    /// Subscribers the breaker stopped, each with the entries it left
    /// untried in queued/.
    public var notAnswering: [String: Int]?
    /// Transient failures `send-now --attention` took back from
    /// needsAttention/ to send again; nil in other rounds.
    public var fromAttention: Int?
    /// `send-now NAME…`: the entries of `queued/` it left there because
    /// they were not named; nil in other rounds.
    public var notChosen: Int?

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
    public var movedAnything: Bool {
        recovered + accepted + invalid + sent + needsAttention + routesAttached + (deferred ?? 0) > 0
    }
}

/// A round either ran, or found another round holding the spool.
public enum RoundResult: Sendable {
    case ran(RoundSummary)
    case busy
}
