import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierSupport

/// Several workers on one spool (`shared = yes`): claims in each worker's
/// own `sending/WORKER/`, recovered only from workers whose lock is free,
/// intake serialised, each record sent once.
@Suite struct SharedSpoolTests {
    static func configuration(_ spool: TemporarySpool, worker: String) -> Configuration {
        var configuration = spool.configuration
        configuration.shared = true
        configuration.workerName = worker
        return configuration
    }

    /// A round of `worker` through its own handle on the spool.
    @discardableResult
    static func round(_ spool: TemporarySpool, worker: String) throws -> RoundSummary {
        let handle = try Spool(path: spool.path)
        let result = try Round(spool: handle, configuration: configuration(spool, worker: worker), mode: .background)
            .run(wait: true)
        guard case .ran(let summary) = result else { throw TestFailure("the round found the worker busy") }
        return summary
    }

    static func ledgerNames(_ spool: TemporarySpool) throws -> [String] {
        try spool.spool.ledgerDirectory.sortedNames().map(\.description)
    }

    @Test("a worker of a shared spool claims into sending/WORKER/ and appends to its own ledger file")
    func aWorkerKeepsToItsOwnFiles() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        for index in 0..<5 { try spool.dropRecord(id: "s-\(index)") }
        try Self.round(spool, worker: "w1")
        #expect(try spool.names(in: .sent).count == 5)
        #expect(try Self.ledgerNames(spool) == ["\(Timestamp.now().utcDay).w1.tsv"])
        #expect(try spool.spool.sendingRoot.sortedNames().map(\.description) == ["w1"])
        #expect(try spool.spool.claims(of: FileName("w1")) == 0)
    }

    @Test("a dead worker's claims go back to queued/ and are sent; a live worker's are left where they are")
    func onlyDeadWorkersAreRecovered() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        let dead = try Spool(path: spool.path)
        try dead.join(as: WorkerID("w2"))
        try dead.deliverNewFile(
            Array(#"{"id":"x","kind":"sleep"}"#.utf8), named: FileName("x@alpha.json"), into: .sending)
        do {
            let live = try Spool(path: spool.path)
            try live.join(as: WorkerID("w3"))
            try live.deliverNewFile(
                Array(#"{"id":"y","kind":"sleep"}"#.utf8), named: FileName("y@alpha.json"), into: .sending)
            let held = try #require(try live.lockWorkerRound(wait: false))

            let summary = try Self.round(spool, worker: "w1")
            #expect(summary.recovered == 1)
            #expect(try spool.names(in: .sent) == ["x@alpha.json"])
            #expect(try spool.spool.claims(of: FileName("w3")) == 1, "w3 holds its lock: its claim is its own")
            let workers = try spool.spool.workers()
            #expect(workers.map(\.worker.value) == ["w1", "w2", "w3"])
            #expect(workers.map(\.alive) == [false, false, true])
            #expect(workers.map(\.claims) == [0, 0, 1])
            withExtendedLifetime(held) {}
        }

        // w3 has died: the next round takes its claim back and sends it.
        try Self.round(spool, worker: "w1")
        #expect(try spool.names(in: .sent) == ["x@alpha.json", "y@alpha.json"])
        let recovered = try spool.ledger().filter { $0.event == .recovered }.map(\.detail)
        #expect(recovered.contains("worker w3 stopped with it in sending/w3/; back to queued/"), "\(recovered)")
    }

    @Test("a second process with the same worker id finds the worker busy")
    func oneProcessPerWorker() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let first = try Spool(path: spool.path)
        try first.join(as: WorkerID("w1"))
        let held = try #require(try first.lockWorkerRound(wait: false))
        let result = try Round(
            spool: try Spool(path: spool.path), configuration: Self.configuration(spool, worker: "w1"),
            mode: .background
        ).run(wait: false)
        guard case .busy = result else { throw TestFailure("a second w1 ran a round beside the first") }
        // Another worker runs beside it.
        let other = try Round(
            spool: try Spool(path: spool.path), configuration: Self.configuration(spool, worker: "w2"),
            mode: .background
        ).run(wait: false)
        guard case .ran = other else { throw TestFailure("w2 could not run beside w1") }
        withExtendedLifetime(held) {}
    }

    @Test("workers running rounds at once over the same dropped files send each record exactly once")
    func concurrentWorkersSendEachRecordOnce() throws {
        let alpha = try LoopbackServer(status: 201)
        let beta = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: alpha.url), TemporarySpool.subscriber("beta", url: beta.url),
        ])
        let ids = (0..<400).map { "c-\($0)" }
        for id in ids { try spool.dropRecord(id: id) }
        let path = spool.path
        let configurations = ["w1", "w2", "w3"].map { Self.configuration(spool, worker: $0) }
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: configurations.count) { index in
            do {
                let result = try Round(
                    spool: try Spool(path: path), configuration: configurations[index], mode: .background
                ).run(wait: true)
                guard case .ran = result else { throw TestFailure("busy") }
            } catch {
                failures.withLock { $0.append("\(configurations[index].workerName ?? "?"): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        for server in [alpha, beta] {
            #expect(server.countsByKey.count == 400)
            #expect(server.countsByKey.values.allSatisfy { $0 == 1 }, "a key was sent twice")
        }
        #expect(try spool.names(in: .sent).count == 800)
        #expect(try spool.placements().filter { $0.key.contains("@") }.values.allSatisfy { $0 == [.sent] })
        for worker in ["w1", "w2", "w3"] { #expect(try spool.spool.claims(of: FileName(worker)) == 0) }
        let lines = try spool.ledger()
        #expect(lines.filter { $0.event == .accepted }.count == 800)
        #expect(lines.filter { $0.event == .sent }.count == 800)
        #expect(lines.filter { $0.event == .duplicate }.isEmpty)
    }

    @Test("an entry another worker claimed and sent after this worker listed it is passed over, not flagged as a twin")
    func anEntryAnotherWorkerSentIsPassedOver() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let entry = try #require(EntryName(fileName: FileName("k@alpha.json")))
        try spool.spool.deliverNewFile(Array(#"{"id":"k","kind":"sleep"}"#.utf8), named: entry.fileName, into: .queued)
        let mine = try Spool(path: spool.path)
        try mine.join(as: WorkerID("w1"))
        // w1's pass has read the name in queued/; w2 renames the entry into
        // its sending/w2/, sends it and settles it in sent/ before w1 claims.
        let other = try Spool(path: spool.path)
        try other.join(as: WorkerID("w2"))
        try other.move(entry.fileName, from: .queued, to: .sending)
        try other.move(entry.fileName, from: .sending, to: .sent)

        let claimer = Claimer(
            spool: mine, configuration: Self.configuration(spool, worker: "w1"),
            ledger: Ledger(directory: mine.ledgerDirectory, worker: mine.worker), round: RoundID.make(at: .now()),
            log: .silent)
        guard case .vanished = try claimer.claim(entry) else { throw TestFailure("w1 did not pass over k") }
        let invalid = try spool.ledger().filter { $0.event == .invalid }
        #expect(invalid.isEmpty, "w1 flagged a file that was never there: \(invalid.map(\.detail))")
        #expect(try spool.names(in: .sent) == ["k@alpha.json"])
        #expect(try spool.names(in: .needsAttention).isEmpty)
        #expect(try mine.claims(of: FileName("w1")) == 0)
    }

    @Test("shared = yes needs a worker id: a device-id that cannot name one is refused, naming the key")
    func theWorkerIDIsChecked() throws {
        let directory = TemporaryDirectory("shared-config")
        let file = directory.path + "/courier.conf"
        let text =
            "[courier]\nspool = /tmp/x\ndevice-id = phone:1\nshared = yes\n\n[subscriber a]\nurl = http://127.0.0.1:9/\n"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: ConfigError.self) { try Configuration.load(file: file, readingSecrets: false) }
        do {
            _ = try Configuration.load(file: file, readingSecrets: false)
        } catch {
            #expect("\(error)".contains("shared") && "\(error)".contains("set worker-id"), "\(error)")
        }
        try (text + "").replacingOccurrences(of: "shared = yes", with: "shared = yes\nworker-id = .hidden")
            .write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try Configuration.load(file: file, readingSecrets: false)
            Issue.record("a hidden worker id was taken")
        } catch {
            #expect("\(error)".contains("worker-id"), "\(error)")
        }
        try text.replacingOccurrences(of: "shared = yes", with: "shared = yes\nworker-id = host-2")
            .write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try Configuration.load(file: file, readingSecrets: false).worker?.value == "host-2")
    }
}
