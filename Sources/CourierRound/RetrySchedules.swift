import CourierConfig
import CourierIdentifiers
import CourierSpool

/// The `retry-schedule` settings, read from the configuration in this one
/// place: each scheduled subscriber's waits. A round keeps them only on a
/// spool that can keep the deferral stamps that count the steps
/// (`kept(on:log:)`, the file-system probe, made once per round); `status`,
/// `why` and the metrics read them as configured.
package struct RetrySchedules: Sendable {
    static let keys: [ConfigKey] = [.courier(.retrySchedule), .subscriber(.retrySchedule)]

    /// Each scheduled subscriber's waits, step by step.
    private let waits: [SubscriberName: [Duration]]

    /// The schedules as configured.
    package init(_ configuration: Configuration) {
        var waits: [SubscriberName: [Duration]] = [:]
        for subscriber in configuration.subscribers {
            if let schedule = subscriber.retrySchedule { waits[subscriber.name] = schedule }
        }
        self.waits = waits
    }

    private init(waits: [SubscriberName: [Duration]]) { self.waits = waits }

    /// These schedules, or none when `spool` does not keep stamps; when a
    /// schedule was given there, the round says so once.
    func kept(on spool: Spool, log: EventLog) -> RetrySchedules {
        guard !waits.isEmpty, !spool.keepsDeferralStamps() else { return self }
        log(
            .warning,
            "retry-schedule is not used: \(spool.path) is on a file system that does not keep the nanoseconds "
                + "of file times, where courier counts an entry's retries; failures need attention instead")
        return RetrySchedules(waits: [:])
    }

    /// The waits of `subscriber`'s schedule; nil: its transient failures
    /// are not deferred.
    package func schedule(of subscriber: SubscriberName) -> [Duration]? { waits[subscriber] }

    /// The subscribers whose entries may carry a deferral stamp.
    package var scheduled: Set<SubscriberName> { Set(waits.keys) }
}
