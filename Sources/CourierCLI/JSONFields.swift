import CourierPosix
import CourierSpool
import Foundation

/// The JSON shapes that more than one command prints, so a thing has the
/// same field names wherever it appears: an item is `entry`, `state`,
/// `key` and `subscriber`; a ledger line is its nine columns by name.
enum JSONFields {
    static func item(_ item: SpoolItem) -> [String: Any] {
        [
            "entry": item.name.description, "state": item.state.rawValue, "key": item.ledgerKey,
            "subscriber": item.ledgerSubscriber,
        ]
    }

    static func ledgerLine(_ line: LedgerLine) -> [String: Any] {
        [
            "time": line.time.rfc3339, "round": line.round, "subscriber": line.subscriber, "key": line.key,
            "event": line.event.rawValue, "status": line.status, "attempt": line.attempt,
            "durationMs": line.durationMilliseconds, "detail": line.detail,
        ]
    }

    /// One value on one line, as `Output.json` prints it.
    static func text(_ value: Any) -> String? {
        (try? JSONSerialization.data(withJSONObject: value, options: Output.jsonOptions))
            .map { String(decoding: $0, as: UTF8.self) }
    }
}
