import CourierConfig
import CourierPosix
import CourierRound
import CourierSpool

extension Explanation {
    /// What `why` must know besides an item and its last ledger line to
    /// say what will happen to it: whether its subscriber is held, when a
    /// deferred entry is due, and the configuration's schedule and
    /// route-wait when there is a configuration.
    package struct Context: Sendable {
        package var hold: Hold?
        /// A queued entry's deferral stamp (its modification time).
        package var stamp: DeferralStamp?
        /// How many steps its subscriber's `retry-schedule` has.
        package var steps: Int?
        package var routeWait: Duration?
        package var now: Timestamp

        package init(
            hold: Hold? = nil, stamp: DeferralStamp? = nil, steps: Int? = nil, routeWait: Duration? = nil,
            now: Timestamp = .now()
        ) {
            self.hold = hold
            self.stamp = stamp
            self.steps = steps
            self.routeWait = routeWait
            self.now = now
        }

        /// The context of `item` in `spool`, under `configuration` if any.
        package static func of(_ item: SpoolItem, in spool: Spool, configuration: Configuration?) throws(SpoolError)
            -> Context
        {
            var context = Context(routeWait: configuration?.routeWait)
            guard let entry = item.entry else { return context }
            context.hold = try spool.holds().first { $0.subscriber == entry.subscriber }
            context.steps = configuration.flatMap { RetrySchedules($0).schedule(of: entry.subscriber)?.count }
            // A stamp means nothing to rounds once the schedule is gone.
            if item.state == .queued && (configuration == nil || context.steps != nil) {
                do {
                    context.stamp = try spool.directory(.queued).status(of: item.name).flatMap {
                        DeferralStamp(modified: $0.modified)
                    }
                } catch {
                    throw SpoolError(error)
                }
            }
            return context
        }
    }
}
