import CourierPosix

/// Who wrote a ledger line, the second column: a round (its id), a person
/// (`manual`: ack, resend, delete, copy, hold, release), `backfill`, or
/// `prune`. The words are today's text, so old ledgers read the same.
package enum LedgerActor: Sendable, Hashable, CustomStringConvertible {
    case round(RoundID)
    case person
    case backfill
    case prune

    /// The column as written; any other word is a round's id.
    package init(column: String) {
        switch column {
        case "manual": self = .person
        case "backfill": self = .backfill
        case "prune": self = .prune
        default: self = .round(RoundID(value: column))
        }
    }

    package var column: String {
        switch self {
        case .round(let id): return id.value
        case .person: return "manual"
        case .backfill: return "backfill"
        case .prune: return "prune"
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
    /// A line written by someone other than a round: the column's word
    /// comes from the actor, never typed again at the call.
    package init(
        time: Timestamp, actor: LedgerActor, subscriber: String, key: String, event: LedgerEvent,
        answer: LedgerAnswer = .none, attempt: Int = 0, durationMilliseconds: Int64 = 0, detail: String = ""
    ) {
        self.init(
            time: time, round: actor.column, subscriber: subscriber, key: key, event: event, status: answer.column,
            attempt: attempt, durationMilliseconds: durationMilliseconds, detail: detail)
    }

    package var actor: LedgerActor { LedgerActor(column: round) }

    package var answer: LedgerAnswer { LedgerAnswer(column: status) }
}
