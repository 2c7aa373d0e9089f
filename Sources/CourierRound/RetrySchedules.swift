import CourierConfig
import CourierIdentifiers
import CourierSpool

/// The `retry-schedule` settings of a round, read from the configuration in
/// this one place and built once per round: each scheduled subscriber's
/// waits, or none at all on a spool that cannot keep the deferral stamps
/// that count the steps (the file-system probe is made here, once, not by
/// each delivery pass). Settling and admission read it.
struct RetrySchedules {
    /// Each scheduled subscriber's waits, step by step.
    private let waits: [SubscriberName: [Duration]]

    /// Whether the spool keeps stamps; when it does not and a schedule was
    /// given, the round says so once.
    init(configuration: Configuration, spool: Spool, log: EventLog) {
        var waits: [SubscriberName: [Duration]] = [:]
        for subscriber in configuration.subscribers {
            if let schedule = subscriber.retrySchedule { waits[subscriber.name] = schedule }
        }
        if !waits.isEmpty && !spool.keepsDeferralStamps() {
            log(
                .warning,
                "retry-schedule is not used: \(spool.path) is on a file system that does not keep the nanoseconds "
                    + "of file times, where courier counts an entry's retries; failures need attention instead")
            waits = [:]
        }
        self.waits = waits
    }

    /// The waits of `subscriber`'s schedule; nil: its transient failures
    /// are not deferred.
    func schedule(of subscriber: SubscriberName) -> [Duration]? { waits[subscriber] }

    /// The subscribers whose entries may carry a deferral stamp.
    var scheduled: Set<SubscriberName> { Set(waits.keys) }
}
