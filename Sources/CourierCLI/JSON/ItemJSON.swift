import CourierSpool

/// An item wherever JSON shows one (`list`, `why`): `entry`, `state`, `key`
/// and `subscriber`, the ledger's words for them.
struct ItemJSON: Encodable, Sendable {
    let entry: String
    let state: String
    let key: String
    let subscriber: String
}

extension ItemJSON {
    init(_ item: SpoolItem) {
        self.init(
            entry: item.name.description, state: item.state.rawValue, key: item.ledgerKey,
            subscriber: item.ledgerSubscriber)
    }
}

/// A ledger line (`log --json`, `why --json`'s `history`): its nine
/// columns by name, `status` and `attempt` numbers, `durationMs` too.
struct LedgerLineJSON: Encodable, Sendable {
    let time: String
    let round: String
    let subscriber: String
    let key: String
    let event: LedgerEvent
    let status: Int
    let attempt: Int
    let durationMs: Int64
    let detail: String

    init(_ line: LedgerLine) {
        time = line.time.rfc3339
        round = line.round
        subscriber = line.subscriber
        key = line.key
        event = line.event
        status = line.status
        attempt = line.attempt
        durationMs = line.durationMilliseconds
        detail = line.detail
    }
}

/// `list --json`: one object per line, the item with what the row shows.
struct ListRowJSON: Encodable, Sendable {
    let item: ItemJSON
    @OrNull var kind: String?
    @OrNull var time: String?
    let ageSeconds: Int64
    @OrNull var lastEvent: LedgerEvent?
    /// 0 for a line with no server answer, as the ledger writes it.
    @OrNull var lastStatus: Int?

    enum CodingKeys: String, CodingKey { case kind, time, ageSeconds, lastEvent, lastStatus }

    func encode(to encoder: any Encoder) throws {
        try item.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(_kind, forKey: .kind)
        try container.encode(_time, forKey: .time)
        try container.encode(ageSeconds, forKey: .ageSeconds)
        try container.encode(_lastEvent, forKey: .lastEvent)
        try container.encode(_lastStatus, forKey: .lastStatus)
    }
}

/// `why --json`: `{query, items:[…]}`.
struct WhyJSON: Encodable, Sendable {
    struct Item: Encodable, Sendable {
        let item: ItemJSON
        let why: String
        let notes: [String]
        let history: [LedgerLineJSON]

        enum CodingKeys: String, CodingKey { case why, notes, history }

        func encode(to encoder: any Encoder) throws {
            try item.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(why, forKey: .why)
            try container.encode(notes, forKey: .notes)
            try container.encode(history, forKey: .history)
        }
    }

    let query: String
    let items: [Item]
}
