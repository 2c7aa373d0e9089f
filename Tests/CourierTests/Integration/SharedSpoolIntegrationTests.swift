import Foundation
import Glibc
import Testing

@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierSupport

/// Several workers on one spool (`shared = yes`): claims in each worker's
/// own `sending/WORKER/`, recovered only from workers whose lock is free,
/// intake serialised, each record sent once.
@Suite(.tags(.integration)) struct SharedSpoolTests {
    static func configuration(_ spool: TemporarySpool, worker: String) -> Configuration {
        var configuration = spool.configuration
        configuration.shared = true
        configuration.workerName = worker
        return configuration
    }

    /// A round of `worker` through its own handle on the spool.
    @discardableResult
    static func round(_ spool: TemporarySpool, worker: String) throws -> RoundSummary {
        let configuration = configuration(spool, worker: worker)
        let session = try SpoolSession(path: spool.path, worker: configuration.worker)
        let result = try Round(session: session, configuration: configuration, mode: .background)
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

    @Test("listing workers creates nothing and writes nothing: status may be run by anyone who can read")
    func listingWorkersIsReadOnly() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        #expect(try spool.spool.workers().isEmpty)
        #expect(try !spool.spool.control.sortedNames().map(\.description).contains("workers"))
    }

    @Test("a second process with the same worker id finds the worker busy")
    func oneProcessPerWorker() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let first = try Spool(path: spool.path)
        try first.join(as: WorkerID("w1"))
        let held = try #require(try first.lockWorkerRound(wait: false))
        let w1 = Self.configuration(spool, worker: "w1")
        let result = try Round(
            session: try SpoolSession(path: spool.path, worker: w1.worker), configuration: w1, mode: .background
        ).run(wait: false)
        guard case .busy = result else { throw TestFailure("a second w1 ran a round beside the first") }
        // Another worker runs beside it.
        let w2 = Self.configuration(spool, worker: "w2")
        let other = try Round(
            session: try SpoolSession(path: spool.path, worker: w2.worker), configuration: w2, mode: .background
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
                let configuration = configurations[index]
                let result = try Round(
                    session: try SpoolSession(path: path, worker: configuration.worker), configuration: configuration,
                    mode: .background
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
            session: try SpoolSession(spool: mine, worker: mine.worker),
            settings: ClaimSettings(Self.configuration(spool, worker: "w1")), round: RoundID.make(at: .now()),
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

    /// A PID no process has here, as a writer on another host has.
    static func absentPID() throws -> Int32 {
        for pid in stride(from: Int32(4_000_000), to: 3_000_000, by: -1) where kill(pid, 0) != 0 && errno == ESRCH {
            return pid
        }
        throw TestFailure("every PID from 3,000,000 to 4,000,000 is taken")
    }

    @Test("on a shared spool staging names carry the worker: writers on two hosts with one PID never pick one name")
    func stagingNamesCarryTheWorker() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        // One process, so one PID, as couriers in containers on two hosts often have.
        let first = try Spool(path: spool.path)
        try first.join(as: WorkerID("w1"))
        let second = try Spool(path: spool.path)
        try second.join(as: WorkerID("w2"))
        let name = FileName("x@alpha.json")
        let names = [first.uniqueTemporaryName(for: name), second.uniqueTemporaryName(for: name)]
        #expect(names[0] != names[1])
        #expect(names[0].description.hasSuffix(".w1:x@alpha.json"), "\(names[0])")
        #expect(names[1].description.hasSuffix(".w2:x@alpha.json"), "\(names[1])")
        #expect(StagingNames.writer(of: names[0], worker: try WorkerID("w1")) == getpid())
        #expect(StagingNames.writer(of: names[0], worker: try WorkerID("w2")) == nil)
        // The longest worker id and target name still make a name a file system takes.
        let long = try Spool(path: spool.path)
        try long.join(as: WorkerID(String(repeating: "w", count: 64)))
        let staged = long.uniqueTemporaryName(for: FileName(String(repeating: "k", count: 200) + "@alpha.json"))
        #expect(staged.bytes.count <= 255, "\(staged.bytes.count) bytes")
        let made = long.uniqueTemporaryName(for: FileName(String(repeating: "k", count: 200)))
        #expect(made.bytes.count <= 255)
        try long.tmp.stage([0x7B, 0x7D], as: made)
    }

    @Test("a worker removes only its own dead writers' tmp/ files: another host's PIDs mean nothing here")
    func otherHostsStagingFilesWaitForPrune() throws {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
        let pid = try Self.absentPID()
        let own = "20261130T070000Z.\(pid)_1.w1:x@alpha.json"
        let others = [
            "20261130T070000Z.\(pid)_1.w2:x@alpha.json",  // worker w2's, writing now on its host
            "20261130T070000Z.\(pid)_1.x@alpha.json",  // a writer that does not say its worker
        ]
        for name in [own] + others {
            #expect(FileManager.default.createFile(atPath: spool.path + "/tmp/" + name, contents: Data("{".utf8)))
        }
        try Self.round(spool, worker: "w1")
        #expect(try spool.spool.tmp.sortedNames().map(\.description) == others.sorted())
    }

    @Test("an entry another worker has claimed exists: the same record dropped again is a duplicate, not sent twice")
    func anotherWorkersClaimIsADuplicate() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        let body = #"{"id":"x","kind":"sleep"}"#
        let live = try Spool(path: spool.path)
        try live.join(as: WorkerID("w2"))
        try live.deliverNewFile(Array(body.utf8), named: FileName("x@alpha.json"), into: .sending)
        let held = try #require(try live.lockWorkerRound(wait: false))
        // The same record again (a script's repeat, or a file another mount
        // still shows under its dropped name after w2 took it in), and the
        // same id with another body.
        try spool.drop(body, as: "again.json")
        try spool.drop(#"{"id":"x","kind":"sleep","data":1}"#, as: "other.json")

        let summary = try Self.round(spool, worker: "w1")
        #expect(server.requests.isEmpty, "w1 sent w2's claim again")
        #expect(summary.duplicates == 1 && summary.invalid == 1, "\(summary)")
        let lines = try spool.ledger()
        #expect(lines.filter { $0.event == .accepted }.isEmpty)
        #expect(lines.contains { $0.event == .duplicate && $0.key == "x" })
        let invalid = lines.filter { $0.event == .invalid }.map(\.detail)
        #expect(invalid.contains { $0.contains("already used by sending/w2/x@alpha.json") }, "\(invalid)")
        #expect(try live.claims(of: FileName("w2")) == 1)
        #expect(try spool.names(in: .queued).isEmpty)
        withExtendedLifetime(held) {}
    }
}
