import CourierPosix
import Glibc

/// A round's id: sortable by start time, unique per spool in practice.
/// It is in every ledger line and every request (`Courier-Session`).
package struct RoundID: Hashable, Sendable, CustomStringConvertible, Codable {
    package let value: String

    package init(value: String) { self.value = value }

    package static func make(at time: Timestamp) -> RoundID {
        // Four random hex digits tell apart rounds that start in one second.
        let random = UInt16.random(in: 0...UInt16.max)
        let hex = String(random, radix: 16)
        return RoundID(value: "\(time.compact)-\(String(repeating: "0", count: 4 - hex.count))\(hex)")
    }

    package var description: String { value }

    /// A plain string in JSON, as in the ledger.
    package init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(String.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
