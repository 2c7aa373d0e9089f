import CourierSpool
import CourierSupport
import Foundation

/// What a batch server said of an item, read back from its ledger line
/// (`status=CONFLICT current_etag=v5 message="version mismatch"`,
/// docs/design.md §8), for `courier why`.
package struct ServerReply: Sendable, Equatable {
    package var status = ""
    package var serverID: String?
    package var etag: String?
    package var currentETag: String?
    package var message: String?

    /// Nil for a line that does not carry a batch result. The fields may
    /// follow courier's own words (`retries exhausted (…): status=…`).
    package init?(_ line: LedgerLine) {
        let detail = line.detail[...]
        guard let start = detail.hasPrefix("status=") ? detail.startIndex : detail.range(of: ": status=")?.lowerBound
        else { return nil }
        let fields = DetailFields.parse(detail[start...].drop { $0 == ":" || $0 == " " })
        for (name, value) in fields {
            switch name {
            case "status": status = value
            case "server_id": serverID = value
            case "etag": etag = value
            case "current_etag": currentETag = value
            case "message": message = value
            default: break
            }
        }
        guard !status.isEmpty else { return nil }
    }

    /// `OK, server_id srv-123, etag v2` or `CONFLICT, current etag v5: version mismatch`.
    package var summary: String {
        var parts = [shown(status)]
        if let serverID { parts.append("server_id \(shown(serverID))") }
        if let etag { parts.append("etag \(shown(etag))") }
        if let currentETag { parts.append("current etag \(shown(currentETag))") }
        return parts.joined(separator: ", ") + (message.map { ": " + shown($0) } ?? "")
    }

    /// A server's words as a terminal may show them: control bytes escaped
    /// as in the ledger, so an answer cannot move the cursor or recolour
    /// the screen of the person reading `why`.
    package func shown(_ text: String) -> String { LedgerLine.escape(text) }
}
