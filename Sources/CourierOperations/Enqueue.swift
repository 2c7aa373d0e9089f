import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool

/// `courier enqueue`: checks a record the way intake will, then drops it
/// into `queued/` atomically (tmp/ then rename), so a half-written file is
/// never seen.
public struct Enqueuer {
    let session: SpoolSession
    let configuration: Configuration

    public init(session: SpoolSession, configuration: Configuration) {
        self.session = session
        self.configuration = configuration
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case invalid(source: String, reason: String)
        case spool(SpoolError)

        public var description: String {
            switch self {
            case .invalid(let source, let reason): return "\(source): \(reason)"
            case .spool(let error): return error.description
            }
        }
    }

    /// Validates and drops one record; returns the name it got in queued/.
    @discardableResult
    public func enqueue(_ bytes: [UInt8], source: String) throws(Failure) -> FileName {
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
        let name = session.spool.uniqueTemporaryName(for: FileName("\(record.id).json"))
        do {
            try session.commit(Transition(newFiles: [.init(bytes, as: name, in: .state(.queued), replacing: false)]))
        } catch {
            throw .spool(error)
        }
        return name
    }
}
