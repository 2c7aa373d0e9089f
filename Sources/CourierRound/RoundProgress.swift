import CourierPosix
import CourierSpool
import Foundation
import Glibc

/// How far a running round has come: what `status` shows of it (from
/// `.courier/round-running.json`) and what a foreground round on a
/// terminal draws on one line.
package struct RoundProgress: Sendable, Codable, Equatable {
    package var round: RoundID
    package var mode: RoundMode
    /// On a shared spool, the worker whose round it is.
    package var worker: String?
    package var host: String
    package var pid: Int32
    package var started: String
    /// When this was written; a round updates it every few seconds.
    package var updated: String
    package var sent = 0
    package var needsAttention = 0
    /// Put back in queued/ by `retry-schedule` in this round.
    package var deferred = 0
    /// Items in requests started and not yet answered.
    package var inFlight = 0
    /// A foreground round's items waiting for their next attempt.
    package var retrying = 0
    /// Seconds until the first of them is tried again.
    package var nextRetrySeconds: Int?
    /// About how many entries the round has still to go through; nil until
    /// it has counted `queued/`, one second into the round.
    package var left: Int?
}

/// What a delivery pass has done so far, for `RoundProgress`.
struct PassCounts {
    var sent = 0
    var needsAttention = 0
    var deferred = 0
    /// Taken in and set aside, or dropped as duplicates.
    var settledByIntake = 0
    /// Entries the pass read and left in queued/ on purpose (held, stopped,
    /// not due, not named).
    var passedOver = 0
    var inFlight = 0
    var retrying = 0
    /// Taken into `sending/` and not in a request yet: not in a count of
    /// `queued/`, and still to do.
    var claimedAhead = 0
    var nextRetry: Duration?

    /// What is done and still in queued/: counted in `queued/` and in the
    /// work done both.
    var stayers: Int { passedOver + deferred }

    var done: Int { sent + needsAttention + deferred + settledByIntake + passedOver }
}

extension RoundProgress {
    /// A running-round file as `status` found it.
    package struct Sighting: Sendable {
        package let progress: RoundProgress
        /// False for a file a killed round left.
        package let alive: Bool
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Every running-round file of the spool, with whether its round is
    /// still alive: its process on this host, or, on another host, a file
    /// updated within the last minute.
    package static func running(in spool: Spool, now: Timestamp = .now()) -> [Sighting] {
        guard let names = try? spool.control.sortedNames() else { return [] }
        let here = hostName()
        return names.compactMap { name -> Sighting? in
            let text = name.description
            guard text.hasPrefix(RunningRound.prefix), text.hasSuffix(".json"),
                let bytes = spool.readControlFile(text, limit: 1 << 16),
                let progress = try? JSONDecoder().decode(RoundProgress.self, from: Data(bytes))
            else { return nil }
            let alive: Bool
            if progress.host == here {
                // EPERM: alive, another user's (status run by a person).
                alive = kill(progress.pid, 0) == 0 || errno == EPERM
            } else {
                alive = Timestamp(rfc3339: progress.updated).map { now - $0 < .seconds(60) } ?? false
            }
            return Sighting(progress: progress, alive: alive)
        }
    }
}
