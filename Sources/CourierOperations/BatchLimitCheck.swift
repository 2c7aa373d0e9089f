import CourierConfig
import CourierTransport

/// `courier check`'s view of `max-batch-bytes`: a record intake may take
/// (up to `max-record-size`) that no batch body of a subscriber can hold
/// would need attention there instead of being sent, so it is worth a
/// warning before one arrives.
package struct BatchLimitCheck {
    let configuration: Configuration

    package init(configuration: Configuration) { self.configuration = configuration }

    /// The bytes of a body around one record: its envelope, and the guess
    /// at an item's other members a batch is filled by.
    func smallestOverhead() -> Int {
        BatchBody.envelopeSize(deviceID: configuration.deviceID) + BatchBody.overheadPerItem
    }

    package func run() -> [SpoolCheck.Finding] {
        configuration.subscribers.filter { $0.mode == .batch }.compactMap { subscriber in
            let limit = subscriber.batch.maxBytes
            guard configuration.maxRecordSize + smallestOverhead() > limit else { return nil }
            return SpoolCheck.Finding(
                severity: .warning,
                message: "max-record-size (\(configuration.maxRecordSize) bytes) exceeds what a batch of "
                    + "[subscriber \(subscriber.name)] can hold (max-batch-bytes = \(limit) bytes, less "
                    + "\(smallestOverhead()) for the body around one record): a record that large would need "
                    + "attention instead of being sent")
        }
    }
}
