import CourierIdentifiers
import CourierRecords

/// Where a record goes: the subscribers it names in `subscribers`, or
/// every subscriber whose `kinds` take its kind. Intake and `enqueue` ask
/// the same question, so they give the same answer.
package enum SubscriberChoice: Sendable {
    case chosen([Subscriber])
    /// A route record goes to no subscriber: it waits for its workout.
    case route(for: RecordID)
    case refused(String)
}

extension Configuration {
    package func subscribers(for record: Record) -> SubscriberChoice { SubscriberChoice.of(record, among: subscribers) }
}

extension SubscriberChoice {
    /// Where `record` goes among `subscribers`, the configured ones.
    package static func of(_ record: Record, among subscribers: [Subscriber]) -> SubscriberChoice {
        if record.kind == RecordKind.route, let workout = record.routeFor { return .route(for: workout) }
        if let names = record.subscribers {
            var chosen: [Subscriber] = []
            for name in names {
                guard let subscriber = subscribers.first(where: { $0.name == name }) else {
                    return .refused("`subscribers` names \(name), which is not configured")
                }
                chosen.append(subscriber)
            }
            return .chosen(chosen)
        }
        let chosen = subscribers.filter { $0.takes(kind: record.kind) }
        return chosen.isEmpty ? .refused("no subscriber takes kind \(record.kind)") : .chosen(chosen)
    }
}
