import CourierPosix

/// The persisted state machine: each state is a directory of the spool and
/// an item is in exactly the state whose directory holds its file.
package enum SpoolState: String, CaseIterable, Sendable, Codable {
    case queued
    case awaitingRoute
    case sending
    case sent
    case failed
    case needsAttention

    /// Order for people: what needs a human first ("red dot").
    package static let attentionFirst: [SpoolState] = [
        .needsAttention, .queued, .awaitingRoute, .sending, .failed, .sent,
    ]

    var directoryName: FileName { FileName(rawValue) }
}
