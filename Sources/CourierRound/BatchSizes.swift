import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool
import Foundation

/// The batch size in force per batch subscriber (docs/design.md §8): a
/// timeout halves it, four batches answered in a row grow it by a quarter,
/// and it never passes `batch-size`. It is kept in `.courier/batch-NAME.json`,
/// so a round starts where the last one left off: a server that timed out
/// on large batches a minute ago is not sent one again at once.
struct BatchSizes {
    struct State: Codable, Equatable {
        var size: Int
        /// Batches answered in a row since the size last changed.
        var answered = 0
        /// The `batch-size` this was reached under; a changed one starts over.
        var configured: Int

        init(configured: Int) {
            size = configured
            self.configured = configured
        }
    }

    /// Batches answered in a row before the size grows. Growing is cautious
    /// and shrinking is not (TCP's additive increase, multiplicative
    /// decrease): a timeout costs a whole `background-timeout`, an answered
    /// batch that could have been larger costs little.
    static let streak = 4

    private var states: [SubscriberName: State] = [:]
    /// As loaded, to write only what changed.
    private var loaded: [SubscriberName: State] = [:]

    static func fileName(_ subscriber: SubscriberName) -> String { "batch-\(subscriber).json" }

    /// Each batch subscriber's saved state. A missing or unreadable file,
    /// or one saved under another `batch-size`, means `batch-size`: the
    /// size is advice, not worth failing a round over.
    init(_ settings: BatchSizeSettings, spool: Spool) {
        for (subscriber, configured) in settings.configured {
            var state = State(configured: configured)
            if let bytes = spool.readControlFile(Self.fileName(subscriber), limit: 4096),
                let saved = try? JSONDecoder().decode(State.self, from: Data(bytes)), saved.configured == configured
            {
                state = saved
                state.size = min(max(1, saved.size), configured)
            }
            states[subscriber] = state
            loaded[subscriber] = state
        }
    }

    func size(of subscriber: Subscriber) -> Int { states[subscriber.name]?.size ?? subscriber.batch.size }

    /// Every batch subscriber's size now.
    var all: [(SubscriberName, Int)] { states.map { ($0.key, $0.value.size) } }

    /// Half of `size`, never below 1.
    static func halved(_ size: Int) -> Int { max(1, size / 2) }

    /// A batch timed out: the size becomes `size` and the count starts over.
    mutating func shrink(_ subscriber: Subscriber, to size: Int) {
        states[subscriber.name, default: State(configured: subscriber.batch.size)].size = size
        states[subscriber.name]?.answered = 0
    }

    /// A batch was answered (2xx): the new size when this one grew it.
    mutating func answered(_ subscriber: Subscriber) -> Int? {
        var state = states[subscriber.name, default: State(configured: subscriber.batch.size)]
        defer { states[subscriber.name] = state }
        guard state.size < state.configured else { return nil }
        state.answered += 1
        guard state.answered >= Self.streak else { return nil }
        state.size = min(state.configured, state.size + (state.size + 3) / 4)
        state.answered = 0
        return state.size
    }

    /// A batch got another answer, or none: no growing on it.
    mutating func failed(_ subscriber: Subscriber) {
        states[subscriber.name]?.answered = 0
    }

    /// Writes the states that changed (atomically, §1); a steady size
    /// writes nothing.
    func save(to session: SpoolSession) throws(SpoolError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var transition = Transition()
        for (name, state) in states.sorted(by: { $0.key < $1.key }) where loaded[name] != state {
            // Encoding three integers cannot fail.
            guard let data = try? encoder.encode(state) else { continue }
            transition.newFiles.append(
                .init(Array(data) + [0x0A], as: FileName(Self.fileName(name)), in: .control, replacing: true))
        }
        try session.commit(transition)
    }
}
