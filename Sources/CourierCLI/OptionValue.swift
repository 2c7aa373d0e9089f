import CourierIdentifiers
import CourierPosix
import CourierSpool
import CourierSupport

/// A type an option's word is read into, once, when the command line is
/// parsed (swift-argument-parser's `ExpressibleByArgument`): a command gets
/// a `SubscriberName` or a `Duration`, never the text to read again.
protocol OptionValue: Sendable {
    /// Nil when `text` is not one.
    init?(optionText text: String)
    /// What the word should have been, as the usage error says after
    /// `--name WORD: `.
    static var expected: String { get }
}

extension String: OptionValue {
    init?(optionText text: String) { self = text }
    static var expected: String { "any text" }
}

extension SubscriberName: OptionValue {
    init?(optionText text: String) { self.init(text) }
    static var expected: String { "not a subscriber name" }
}

extension Duration: OptionValue {
    init?(optionText text: String) {
        guard let duration = Units.duration(text) else { return nil }
        self = duration
    }
    static var expected: String { "not a duration (such as 90s, 30m, 2h, 7d)" }
}

extension LedgerEvent: OptionValue {
    init?(optionText text: String) { self.init(rawValue: text) }
    static var expected: String { "not an event (\(allCases.map(\.rawValue).joined(separator: ", ")))" }
}

extension TimeExpression: OptionValue {
    init?(optionText text: String) { self.init(text) }
    static var expected: String { "not a time; give \(forms)" }
}

/// `--since 2026-11-01` or an RFC 3339 time, as backfill takes them: a bare
/// day is kept apart, since `--until DAY` means the whole of that day.
struct DayOrTime: OptionValue, Equatable {
    let time: Timestamp
    let isDay: Bool

    init?(optionText text: String) {
        guard let time = Timestamp(dateOrTime: text) else { return nil }
        self.time = time
        isDay = text.utf8.count == 10
    }

    static var expected: String { "not YYYY-MM-DD or RFC 3339" }
}
