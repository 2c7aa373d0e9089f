import CourierIdentifiers
import CourierPosix

/// Who wrote a ledger line, the second column: a round or a catalog sync
/// (its id), a person (`manual`: ack, resend, delete, copy, hold,
/// release), `backfill`, `prune`, or `-`: the protocol itself outside a
/// round (a file a person's move found in its way, a rename recovery
/// finished). The words are today's text, so old ledgers read the same.
package enum LedgerActor: Sendable, Hashable, CustomStringConvertible {
    case round(RoundID)
    case person
    case backfill
    case prune
    case unattributed

    /// The column as written; any other word is a round's id.
    package init(column: String) {
        switch column {
        case "manual": self = .person
        case "backfill": self = .backfill
        case "prune": self = .prune
        case "-": self = .unattributed
        default: self = .round(RoundID(value: column))
        }
    }

    package var column: String {
        switch self {
        case .round(let id): return id.value
        case .person: return "manual"
        case .backfill: return "backfill"
        case .prune: return "prune"
        case .unattributed: return "-"
        }
    }

    package var description: String { column }
}

/// A ledger line's status column: the HTTP status a server answered, or
/// none (the column's 0: no request, or no answer to one).
package enum LedgerAnswer: Sendable, Hashable {
    case none
    case status(Int)

    package init(column: Int) { self = column == 0 ? .none : .status(column) }

    package var column: Int {
        switch self {
        case .none: return 0
        case .status(let status): return status
        }
    }

    /// The status, or nil when no server answered.
    package var status: Int? {
        guard case .status(let status) = self else { return nil }
        return status
    }
}

extension LedgerLine {
    /// A line to write: the columns' words come from typed values, never
    /// typed again at the call. `subscriber`: nil for an event of no
    /// subscriber's (a flagged file, a duplicate drop), written `-`.
    package init(
        time: Timestamp, actor: LedgerActor, subscriber: SubscriberName?, key: String, event: LedgerEvent,
        answer: LedgerAnswer = .none, attempt: Int = 0, durationMilliseconds: Int64 = 0, detail: String = ""
    ) {
        self.init(
            time: time, round: actor.column, subscriber: subscriber?.value ?? Self.noSubscriber, key: key,
            event: event, status: answer.column, attempt: attempt, durationMilliseconds: durationMilliseconds,
            detail: detail)
    }

    /// The subscriber column of a line about no subscriber's entry.
    package static let noSubscriber = "-"

    /// The subscriber column as a name; nil for `-` (or text no
    /// subscriber could be named).
    package var subscriberName: SubscriberName? { SubscriberName(subscriber) }

    package var actor: LedgerActor { LedgerActor(column: round) }

    package var answer: LedgerAnswer { LedgerAnswer(column: status) }
}
