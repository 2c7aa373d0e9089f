import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierRecords
import CourierSpool
import Glibc

/// `courier backfill`: the fourth trigger. Re-sends history to one
/// subscriber with the records' own keys, so an endpoint that already has
/// a record keeps it once.
package struct Backfill {
    package enum Source: Sendable, Equatable {
        /// Every record already delivered to anyone, one per id.
        case sent
        /// The record files in a directory.
        case directory(String)
    }

    package struct Report: Sendable {
        /// Entries written to or moved into `queued/`.
        package var queued: [String] = []
        /// Entries already waiting (`queued/`, `sending/`, `awaitingRoute/`).
        package var alreadyPending: [String] = []
        /// Files in the source that are not records, with the reason.
        package var skipped: [String] = []
        /// Records of a kind the subscriber does not take, with the kind.
        package var notTaken: [String] = []
    }

    let session: SpoolSession
    let configuration: Configuration

    package init(session: SpoolSession, configuration: Configuration) {
        self.session = session
        self.configuration = configuration
    }

    private var spool: Spool { session.spool }

    /// Records whose `time` (else the file's modification time) lies in
    /// `since ..< until`.
    package func run(
        since: Timestamp, until: Timestamp, subscriber: SubscriberName, from source: Source, dryRun: Bool
    ) throws(OperationError) -> Report {
        guard let target = configuration.subscriber(named: subscriber) else {
            throw .unknownSubscriber(subscriber.value)
        }
        var report = Report()
        let candidates = try collect(from: source, for: target, since: since, until: until, report: &report)
        let origin: String
        switch source {
        case .sent: origin = "sent/"
        case .directory(let path): origin = path
        }
        do {
            for (id, bytes) in candidates.sorted(by: { $0.key < $1.key }) {
                let entry = EntryName(key: DeliveryKey(id: id), subscriber: subscriber)
                let state = try spool.locate(entry.fileName)
                switch state {
                case .queued, .sending, .awaitingRoute:
                    report.alreadyPending.append(entry.description)
                    continue
                case .sent, .failed, .needsAttention, nil:
                    report.queued.append(entry.description)
                }
                guard !dryRun else { continue }
                var transition = Transition()
                transition.lines = [
                    LedgerLine(
                        time: .now(), actor: .backfill, subscriber: subscriber, key: entry.key.description,
                        event: .backfilled, detail: "from \(origin)" + (state.map { "; was in \($0.rawValue)/" } ?? ""))
                ]
                if let state {
                    transition.moves = [.init(entry, from: state, to: .queued)]
                } else {
                    transition.newFiles = [.init(bytes, as: entry.fileName, in: .state(.queued), replacing: false)]
                }
                try session.commit(transition)
            }
        } catch {
            throw .spool(error)
        }
        return report
    }

    /// One record per id in the range, of a kind `subscriber` takes (as
    /// intake would choose it: backfill catches a subscriber up, it does not
    /// send what it never wanted).
    private func collect(
        from source: Source, for subscriber: Subscriber, since: Timestamp, until: Timestamp, report: inout Report
    ) throws(OperationError) -> [RecordID: [UInt8]] {
        var found: [RecordID: (bytes: [UInt8], preferred: Bool)] = [:]
        func consider(_ bytes: [UInt8], modified: Timestamp, label: String, preferred: Bool) {
            switch Record.parse(bytes, maximumSize: configuration.maxRecordSize) {
            case .failure(let problem):
                report.skipped.append("\(label): \(problem)")
            case .success(let record):
                let time = record.time ?? modified
                guard time >= since && time < until else { return }
                guard subscriber.takes(kind: record.kind) else {
                    report.notTaken.append("\(label): kind \(record.kind)")
                    return
                }
                // One per id: the original rather than a deliberate copy.
                if let existing = found[record.id], existing.preferred || !preferred { return }
                found[record.id] = (bytes, preferred)
            }
        }
        do {
            switch source {
            case .sent:
                let sent = spool.directory(.sent)
                let stream = try sent.entries()
                while let name = try stream.next() {
                    guard let entry = EntryName(fileName: name), let status = try sent.status(of: name) else {
                        continue
                    }
                    let bytes = try sent.openFile(name, flags: O_RDONLY).read(upTo: configuration.maxRecordSize + 1)
                    consider(bytes, modified: status.modified, label: "sent/\(name)", preferred: entry.key.copy == nil)
                }
            case .directory(let path):
                let directory = try DirectoryHandle.open(path: path)
                for name in try directory.sortedNames() {
                    guard let status = try directory.status(of: name), status.kind == .regular else {
                        report.skipped.append("\(path)/\(name): not a regular file")
                        continue
                    }
                    let bytes = try directory.openFile(name, flags: O_RDONLY).read(
                        upTo: configuration.maxRecordSize + 1)
                    consider(bytes, modified: status.modified, label: "\(path)/\(name)", preferred: true)
                }
            }
        } catch {
            throw .spool(SpoolError(error))
        }
        return found.mapValues(\.bytes)
    }
}
