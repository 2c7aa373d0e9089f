import CourierConfig
import CourierPosix
import CourierRecords
import CourierSpool

/// `courier enqueue`: checks a record the way intake will, then drops it
/// into `queued/` atomically (tmp/ then rename), so a half-written file is
/// never seen.
public struct Enqueuer {
    let spool: Spool
    let configuration: Configuration

    public init(spool: Spool, configuration: Configuration) {
        self.spool = spool
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
        let name = spool.uniqueTemporaryName(for: FileName("\(record.id).json"))
        do {
            try spool.deliverNewFile(bytes, named: name, into: .queued)
        } catch {
            throw .spool(error)
        }
        return name
    }
}
