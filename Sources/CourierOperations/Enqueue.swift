import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool

/// `courier enqueue`: checks a record the way intake will, then drops it
/// into `queued/` atomically (tmp/ then rename), so a half-written file is
/// never seen. It needs only the spool's intake folders (`SpoolInbox`),
/// which is all a member of the producers group may open.
package struct Enqueuer {
    var inbox: SpoolInbox
    let configuration: Configuration

    package init(inbox: SpoolInbox, configuration: Configuration) {
        self.inbox = inbox
        self.configuration = configuration
    }

    package enum Failure: Error, Sendable, CustomStringConvertible {
        case invalid(source: String, reason: String)
        case spool(SpoolError)

        package var description: String {
            switch self {
            case .invalid(let source, let reason): return "\(source): \(reason)"
            case .spool(let error): return error.description
            }
        }
    }

    /// Validates and drops one record; returns the name it got in queued/.
    @discardableResult
    package mutating func enqueue(_ bytes: [UInt8], source: String) throws(Failure) -> FileName {
        let record: Record
        switch Record.parse(bytes, maximumSize: configuration.maxRecordSize) {
        case .success(let parsed): record = parsed
        case .failure(let problem): throw .invalid(source: source, reason: problem.description)
        }
        if case .refused(let reason) = configuration.subscribers(for: record) {
            throw .invalid(source: source, reason: reason)
        }
        // The name only has to be unique and not look like an entry;
        // intake reads the id from inside the file.
        let name = inbox.uniqueName(for: FileName("\(record.id).json"))
        do {
            try inbox.drop(bytes, named: name)
        } catch {
            throw .spool(error)
        }
        return name
    }
}
