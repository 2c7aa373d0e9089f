import Foundation
import Testing

@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// docs/design.md §8, "Etags": the last etag a batch server gave per entity
/// is kept in `.courier/etags/SUB/.journal`, where `courier etag` and `why` find it
/// for the next `UPDATE`.
@Suite(.tags(.integration)) struct EntityTagTests {
    /// A batch server that gives every item `etag` `v-KEY` and server id `srv-KEY`.
    static func server(etag: @escaping @Sendable (String) -> String = { "v-\($0)" }) throws -> LoopbackServer {
        try LoopbackServer { request, _ in
            let results = BatchTests.keys(of: request).map { key in
                #"{"idempotency_key":"\#(key)","status":"OK","server_id":"srv-\#(key)","etag":"\#(etag(key))"}"#
            }
            return .respond(.json(200, #"{"results":[\#(results.joined(separator: ","))]}"#))
        }
    }

    static func spool(_ server: LoopbackServer) throws -> TemporarySpool {
        let spool = try TemporarySpool(subscribers: [BatchTests.batchSubscriber(server.url)])
        spool.companions.append(server)
        return spool
    }

    @Test("a batch answer's etag is kept for the entity the record writes: its own id, or the one it updates")
    func etagsAreKeptPerEntity() throws {
        let spool = try Self.spool(try Self.server())
        let store = EntityTagStore(spool: spool.spool)
        let batchy = try TemporarySpool.subscriberName("batchy")
        for id in ["o-1", "o-2", "o-3"] { try spool.dropRecord(id: id, kind: "order") }
        try spool.runRound()
        #expect(try store.tag(of: #require(RecordID("o-1")), from: batchy)?.etag == "v-o-1")
        #expect(try store.tag(of: #require(RecordID("o-3")), from: batchy)?.serverID == "srv-o-3")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: spool.path + "/.courier/etags/batchy") == [
                ".journal"
            ])

        try spool.drop(#"{"id":"o-1-u1","kind":"order","op":"UPDATE","updates":"o-1","etag":"v-o-1"}"#, as: "u.json")
        try spool.runRound()
        let entity = try #require(RecordID("o-1"))
        let kept = try #require(try store.tag(of: entity, from: batchy))
        #expect(kept.etag == "v-o-1-u1", "the update's answer replaced the entity's etag")
        #expect(kept.key == "o-1-u1")
        #expect(try store.tag(of: #require(RecordID("o-1-u1")), from: batchy) == nil)

        let notes = Explanation.serverNotes(
            for: try #require(try spool.spool.resolve("o-1-u1").first),
            history: try spool.ledger().filter { $0.key == "o-1-u1" }, in: spool.spool)
        #expect(notes.first == "the subscriber said: OK, server_id srv-o-1-u1, etag v-o-1-u1")
        #expect(notes.last?.hasPrefix("etag kept for o-1 from batchy: v-o-1-u1 (given for o-1-u1 at ") == true)
    }

    @Test("an etag with a secret or a control byte in it is not kept, and the ledger shows it redacted")
    func unsafeEtagsAreNotKept() throws {
        let token = "the-secret-token-42"
        let server = try Self.server { key in key == "secret" ? "v1-\(token)" : "bad\\ttag" }
        var subscriber = Subscriber(name: try TemporarySpool.subscriberName("batchy"), url: server.url, token: token)
        subscriber.mode = .batch
        let spool = try TemporarySpool(subscribers: [subscriber])
        spool.companions.append(server)
        for id in ["secret", "control"] { try spool.dropRecord(id: id) }
        try spool.runRound()
        #expect(try spool.names(in: .sent).count == 2)
        #expect(try EntityTagStore(spool: spool.spool).tags(of: #require(RecordID("secret"))).isEmpty)
        #expect(try EntityTagStore(spool: spool.spool).tags(of: #require(RecordID("control"))).isEmpty)
        let text = try spool.ledgerText()
        #expect(text.contains("etag=v1-[redacted]") && !text.contains(token), "\(text)")
        #expect(text.contains(#"etag="bad\tt"#), "\(text)")
    }

    @Test("prune removes etags no answer renewed within the retention, and nothing else of .courier/")
    func pruneAgesOutEtags() throws {
        let spool = try Self.spool(try Self.server())
        for id in ["old", "young"] { try spool.dropRecord(id: id) }
        try spool.runRound()
        let batchy = try TemporarySpool.subscriberName("batchy")
        // Prune runs 200 days on: "old" was given then, "young" renewed since.
        let now = Timestamp.now() + .seconds(200 * 86_400)
        let renewed = EntityTag(etag: "v-young-2", serverID: nil, key: "young-u1", time: now - .seconds(86_400))
        var transition = Transition()
        transition.tags = [EntityTagUpdate(subscriber: batchy, entity: try #require(RecordID("young")), tag: renewed)]
        try spool.session.commit(transition)
        // An older courier's file per entity goes by its mtime.
        let folder = try #require(try EntityTagStore(spool: spool.spool).folder(for: batchy))
        try folder.openFile(FileName("legacy"), flags: O_WRONLY | O_CREAT | O_EXCL)
            .write(Array(#"{"etag":"v-legacy","key":"legacy","time":"2026-01-01T00:00:00Z"}"#.utf8))
        try folder.setModified(FileName("legacy"), to: now - .seconds(300 * 86_400))
        let report = try Pruner(session: spool.session, retention: .seconds(183 * 86_400), now: now, dryRun: false)
            .run()
        #expect(report.entityTags.sorted() == ["batchy/legacy", "batchy/old"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: spool.path + "/.courier/etags/batchy") == [".journal"])
        let store = EntityTagStore(spool: spool.spool)
        #expect(try store.tag(of: #require(RecordID("old")), from: batchy) == nil)
        #expect(try store.tag(of: #require(RecordID("young")), from: batchy)?.etag == "v-young-2")
        #expect(spool.spool.readControlFile(Round.lastRoundFile) != nil)
    }

    @Test("every failing rename, write and fsync of a batch round leaves a legal spool and, after it, every etag kept")
    func faultsLeaveEveryEtagKept() throws {
        let server = try Self.server()
        let ids = (0..<5).map { "e-\($0)" }
        func spool() throws -> TemporarySpool {
            let spool = try Self.spool(server)
            for id in ids { try spool.dropRecord(id: id, kind: "order") }
            return spool
        }
        func expectKept(_ spool: TemporarySpool, _ label: String) throws {
            #expect(try spool.names(in: .sent) == ids.map { "\($0)@batchy.json" }, "\(label)")
            #expect(try spool.spool.tmp.sortedNames().isEmpty, "\(label): orphans in tmp/")
            let store = EntityTagStore(spool: spool.spool)
            for id in ids {
                let tag = try store.tag(of: #require(RecordID(id)), from: TemporarySpool.subscriberName("batchy"))
                #expect(tag?.etag == "v-\(id)", "\(label): \(id)")
            }
        }
        let sweep = try FaultSweep {
            let counting = try spool()
            let counter = FaultPlan()
            counting.session.faults = counter
            try counting.runRound()
            try expectKept(counting, "no fault")
            return counter.counts
        }
        for operation in FaultPlan.Operation.allCases {
            for occurrence in sweep.occurrences(of: operation) {
                let label = "\(operation) #\(occurrence) fails"
                guard
                    let (faulted, outcome) = try sweep.reachFailing(
                        label, operation, occurrence, with: .noSpace, spool: spool, run: { try $0.runRound() })
                else { continue }
                #expect(throws: RoundError.self, "\(label)") { try outcome.get() }
                faulted.session.faults = nil
                try faulted.runRound()
                try expectKept(faulted, label)
            }
        }
    }
}
