/// How a `needsAttention` line says that its failure was transient (no
/// answer, a timeout, 408, 429, 5xx, a batch item the server asked to have
/// again): courier's own words at the start of the detail. The round
/// writes them; `why` and `send-now --attention` read them, so that what
/// they say and do about an item rests on what really happened to it.
///
/// A server cannot write them: every `needsAttention` line of an attempt
/// starts with courier's words, these or `refused (…)` for an answer no
/// retry fixes, and the server's text only ever follows them. A line is
/// read as transient only when its status column agrees (no answer, 408,
/// 429, 5xx, or a 2xx batch whose item was not taken), so that a line
/// written before the `refused` words, whose detail begins with a 4xx
/// answer's own text, is never taken for one.
package enum TransientFailure: Sendable, CaseIterable {
    /// A background round tried once: the subscriber has no `retry-schedule`.
    case triedOnce
    /// A foreground round's retries, or every step of `retry-schedule`, ran out.
    case retriesExhausted
    /// The breaker stopped the round's retries: the subscriber was not answering.
    case stoppedByBreaker

    private var words: String {
        switch self {
        case .triedOnce: return "tried once"
        case .retriesExhausted: return "retries exhausted"
        case .stoppedByBreaker: return "retries stopped by the breaker"
        }
    }

    /// The ledger detail: `tried once (HTTP 503): {"error":…}`.
    package func detail(reason: String, _ answer: String) -> String {
        "\(words) (\(Self.brief(reason, answer: answer))): " + answer
    }

    /// The ledger detail of an answer no retry fixes: `refused (HTTP 400): {…}`.
    package static func refusedDetail(reason: String, _ answer: String) -> String {
        "refused (\(brief(reason, answer: answer))): " + answer
    }

    /// The statuses of an attempt that a retry may fix: none (0), 408, 429,
    /// 5xx; and 2xx, for a batch item the server did not take.
    static func isTransient(status: Int) -> Bool {
        status == 0 || status == 408 || status == 429 || (500...599).contains(status) || (200...299).contains(status)
    }

    /// The reason without the answer it repeats: curl's words are both the
    /// reason and the detail of an attempt that got no answer, and the
    /// ledger keeps only 200 bytes of the two.
    package static func brief(_ reason: String, answer: String) -> String {
        guard !answer.isEmpty else { return reason }
        if answer.hasPrefix(reason) { return "no answer" }
        if let colon = reason.range(of: ": "), answer.hasPrefix(reason[colon.upperBound...]) {
            return String(reason[..<colon.lowerBound])
        }
        return reason
    }

    /// What the line says was wrong (`HTTP 503`, `timeout: …`), from the
    /// words courier put in front of the answer; nil for other lines.
    package static func reason(in line: LedgerLine) -> String? {
        guard isTransient(status: line.status) else { return nil }
        for words in allCases.map(\.words) where line.detail.hasPrefix(words + " (") {
            let rest = line.detail.dropFirst(words.count + 2)
            return rest.range(of: "): ").map { String(rest[..<$0.lowerBound]) } ?? String(rest)
        }
        return nil
    }

    /// Which words a line of a transient failure carries, if any.
    package init?(_ line: LedgerLine) {
        guard Self.isTransient(status: line.status),
            let found = Self.allCases.first(where: { line.detail.hasPrefix($0.words + " (") })
        else { return nil }
        self = found
    }

    /// Whether a line records a transient failure. Lines written before
    /// these words existed are judged by their status alone: 408, 429 and
    /// 5xx are always transient, while a status 0 line could also be a
    /// certificate that does not verify, which no retry fixes.
    package static func recorded(in line: LedgerLine) -> Bool {
        guard line.event == .needsAttention else { return false }
        if TransientFailure(line) != nil { return true }
        return line.status == 408 || line.status == 429 || (500...599).contains(line.status)
    }
}
