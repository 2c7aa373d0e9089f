import Foundation

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// A real spool in a temporary directory, with helpers to drop records and
/// look at where things are.
final class TemporarySpool {
    let directory: TemporaryDirectory
    let spool: Spool
    /// The test process's one session of the spool, as a command's.
    let session: SpoolSession
    var configuration: Configuration
    /// Servers that must live as long as the spool does.
    var companions: [AnyObject] = []

    init(subscribers: [Subscriber] = []) throws {
        directory = TemporaryDirectory("spool")
        spool = try Spool.create(at: directory.path + "/spool")
        session = try SpoolSession(spool: spool, worker: nil)
        configuration = Configuration(spool: directory.path + "/spool", subscribers: subscribers)
        configuration.deviceID = "test-device"
        // Tests must not wait for the settle rule unless they test it.
        configuration.settle = .zero
        configuration.backgroundTimeout = .seconds(5)
        configuration.foregroundTimeout = .seconds(5)
        configuration.backoff = [.milliseconds(20), .milliseconds(40)]
    }

    /// A spool with one subscriber, `alpha`, on a port nothing listens on:
    /// for tests that drive intake or commits and send nothing.
    static func withUnreachableAlpha() throws -> TemporarySpool {
        try TemporarySpool(subscribers: [subscriber("alpha", url: "http://127.0.0.1:9/")])
    }

    var path: String { spool.path }

    static func subscriber(
        _ name: String, url: String, kinds: Set<String>? = nil, token: String? = nil,
        headers: [HTTPHeaderField] = [], concurrency: Int = 8
    ) throws -> Subscriber {
        Subscriber(
            name: try subscriberName(name), url: url, kinds: kinds, token: token, headers: headers,
            concurrency: concurrency)
    }

    /// A subscriber (or catalog) name, or a failure saying why not.
    static func subscriberName(_ text: String) throws -> SubscriberName {
        guard let name = SubscriberName(text) else { throw TestFailure("`\(text)` is not a subscriber name") }
        return name
    }

    /// Drops a file into queued/ the maildir way, under any name.
    func drop(_ text: String, as name: String) throws {
        try drop(Array(text.utf8), as: FileName(name))
    }

    func drop(_ bytes: [UInt8], as name: FileName) throws {
        try spool.deliverNewFile(bytes, named: name, into: .queued)
    }

    func dropRecord(id: String, kind: String = "sleep", extra: String = "") throws {
        try drop(#"{"id":"\#(id)","kind":"\#(kind)"\#(extra)}"#, as: "\(id).json")
    }

    @discardableResult
    func runRound(_ mode: RoundMode = .background) throws -> RoundSummary {
        let result = try Round(session: session, configuration: configuration, mode: mode).run(wait: true)
        guard case .ran(let summary) = result else { throw TestFailure("the round found the spool busy") }
        return summary
    }

    func names(in state: SpoolState) throws -> [String] {
        try spool.directory(state).sortedNames().map(\.description)
    }

    /// Every item name with the states that hold it; a name in two states
    /// is a broken promise.
    func placements() throws -> [String: [SpoolState]] {
        var placements: [String: [SpoolState]] = [:]
        for state in SpoolState.allCases {
            for name in try names(in: state) { placements[name, default: []].append(state) }
        }
        return placements
    }

    func ledger() throws -> [LedgerLine] {
        var lines: [LedgerLine] = []
        _ = try Ledger.read(from: spool.ledgerDirectory) { lines.append($0) }
        return lines
    }

    func ledgerText() throws -> String {
        var text = ""
        for (_, name) in try Ledger.dayFiles(in: spool.ledgerDirectory) {
            text += try String(contentsOfFile: path + "/ledger/\(name)", encoding: .utf8)
        }
        return text
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
