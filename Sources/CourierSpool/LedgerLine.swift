import CourierPosix
import CourierSupport

/// What happened to an item; the ledger's fifth column.
package enum LedgerEvent: String, CaseIterable, Sendable, Codable {
    /// An intake file became this entry.
    case accepted
    /// An intake file repeated an entry that already exists byte for byte.
    case duplicate
    case sent
    case retry
    case needsAttention
    case invalid
    case awaitingRoute
    /// A route record was merged into this workout entry as `data.route`.
    case routeAttached
    case routeTimeout
    case acknowledged
    case resent
    case copied
    case backfilled
    case recovered
    /// A catalog sync finished (subscriber column: the catalog).
    case catalogSynced
    /// A catalog sync failed; it resumes where it stopped.
    case catalogFailed
    /// A catalog item the server deleted (a tombstone) was removed; the
    /// detail keeps its `deleted_at` and `version` when the server gave them.
    case catalogDeleted
    /// An entry that was never delivered was removed: by a person, or by
    /// `prune` under `failed-retention`.
    case deleted
    /// A transient failure under `retry-schedule`: back in `queued/` until
    /// the time in the detail (the entry's modification time).
    case deferred
    /// A person held a subscriber (subscriber column; key `-`): rounds send
    /// it nothing until it is released.
    case held
    /// A held subscriber was released.
    case released
}

/// One line of `ledger/YYYY-MM-DD.tsv`: nine tab-separated columns.
package struct LedgerLine: Sendable, Equatable {
    package var time: Timestamp
    package var round: String
    /// `-` for events that belong to no subscriber (an invalid intake file).
    package var subscriber: String
    package var key: String
    package var event: LedgerEvent
    /// 0 when there was no HTTP answer.
    package var status: Int
    package var attempt: Int
    package var durationMilliseconds: Int64
    package var detail: String

    package static let detailLimit = DetailLimit.bytes

    /// The columns as text, as a line is read back; writers use the typed
    /// `init(time:actor:subscriber:…)`.
    init(
        time: Timestamp, round: String, subscriber: String, key: String, event: LedgerEvent, status: Int = 0,
        attempt: Int = 0, durationMilliseconds: Int64 = 0, detail: String = ""
    ) {
        self.time = time
        self.round = round
        self.subscriber = subscriber
        self.key = key
        self.event = event
        self.status = status
        self.attempt = attempt
        self.durationMilliseconds = durationMilliseconds
        self.detail = detail
    }

    /// The line as written, newline included.
    package var formatted: String {
        [
            time.rfc3339, Self.escape(round), Self.escape(subscriber), Self.escape(key), event.rawValue, String(status),
            String(attempt), String(durationMilliseconds), Self.escape(detail.utf8Prefix(Self.detailLimit)),
        ].joined(separator: "\t") + "\n"
    }

    /// Parses a line without its newline; nil for a malformed one.
    package init?(parsing line: Substring) {
        // Split on the tab byte, not on Characters: grapheme breaking made
        // parsing the larger part of reading a day's ledger.
        let columns = line.utf8.split(separator: 0x09, omittingEmptySubsequences: false).map { Substring($0) }
        guard columns.count == 9, let time = Timestamp(rfc3339: String(columns[0])),
            let event = LedgerEvent(rawValue: String(columns[4])), let status = Int(columns[5]),
            let attempt = Int(columns[6]), let duration = Int64(columns[7])
        else { return nil }
        self.init(
            time: time, round: Self.unescape(columns[1]), subscriber: Self.unescape(columns[2]),
            key: Self.unescape(columns[3]), event: event, status: status, attempt: attempt,
            durationMilliseconds: duration, detail: Self.unescape(columns[8]))
    }

    /// Tab, newline, carriage return and backslash as `\t \n \r \\`; other
    /// control characters as `\xHH`, so one event is always one line that
    /// awk and cut can split.
    package static func escape(_ text: String) -> String {
        // Most text needs nothing: said at byte speed, or faster.
        guard text.withUTF8Bytes(needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                result += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    package static func unescape(_ text: Substring) -> String {
        // A byte search: Substring.contains(String) is Foundation's, and slow.
        guard text.utf8.contains(UInt8(ascii: "\\")) else { return String(text) }
        var result = ""
        var iterator = text.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\", let next = iterator.next() else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch next {
            case "t": result += "\t"
            case "n": result += "\n"
            case "r": result += "\r"
            case "x":
                let digits = [iterator.next(), iterator.next()].compactMap { $0 }.map(Character.init)
                if let value = UInt32(String(digits), radix: 16), let decoded = Unicode.Scalar(value) {
                    result.unicodeScalars.append(decoded)
                }
            default: result.unicodeScalars.append(next)
            }
        }
        return result
    }
}
