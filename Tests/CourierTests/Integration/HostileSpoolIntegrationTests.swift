import Foundation
import Glibc
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// What a careless or hostile writer of `queued/` can leave there, and a
/// person moving things while a round runs: one bad item never stops the
/// others, and nothing is sent that is not an entry's whole bytes.
@Suite(.tags(.integration)) struct HostileSpoolTests {
    static func spool(maxRecordSize: Int = 1 << 20, server: LoopbackServer) throws -> TemporarySpool {
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        spool.configuration.maxRecordSize = maxRecordSize
        spool.companions.append(server)
        return spool
    }

    static func reasons(_ spool: TemporarySpool) throws -> [String: String] {
        var reasons: [String: String] = [:]
        for line in try spool.ledger() where line.event == .needsAttention || line.event == .invalid {
            reasons[line.key] = line.detail
        }
        return reasons
    }

    @Test("entries that are links, FIFOs, folders, oversized or hard-linked need attention and the rest are sent")
    func badEntriesNeedAttentionAndTheRestAreSent() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(maxRecordSize: 200, server: server)
        let outside = TemporaryDirectory("outside")
        try outside.write(#"{"id":"secret","kind":"sleep"}"#, to: "secret.json")
        let queued = spool.path + "/queued/"
        #expect(symlink(outside.path + "/secret.json", queued + "link@alpha.json") == 0)
        #expect(mkfifo(queued + "fifo@alpha.json", 0o644) == 0)
        #expect(mkdir(queued + "folder@alpha.json", 0o755) == 0)
        try spool.drop(
            #"{"id":"big","kind":"sleep","pad":""# + String(repeating: "x", count: 300) + #""}"#,
            as: "big@alpha.json")
        #expect(link(outside.path + "/secret.json", queued + "hard@alpha.json") == 0)
        try spool.dropRecord(id: "good")

        let summary = try spool.runRound()

        #expect(try spool.names(in: .sent) == ["good@alpha.json"])
        #expect(server.requests.map { String(decoding: $0.body, as: UTF8.self) } == [#"{"id":"good","kind":"sleep"}"#])
        #expect(
            Set(try spool.names(in: .needsAttention))
                == ["big@alpha.json", "fifo@alpha.json", "folder@alpha.json", "hard@alpha.json", "link@alpha.json"])
        #expect(try spool.names(in: .sending).isEmpty)
        #expect(summary.needsAttention == 5)
        let reasons = try Self.reasons(spool)
        #expect(reasons["link"]?.contains("symbolic link") == true, "\(reasons)")
        #expect(reasons["fifo"]?.contains("FIFO") == true, "\(reasons)")
        #expect(reasons["folder"]?.contains("directory") == true, "\(reasons)")
        #expect(reasons["big"]?.contains("max-record-size") == true, "\(reasons)")
        #expect(reasons["hard"]?.contains("link") == true, "\(reasons)")
        // The file behind the link was neither sent nor touched.
        #expect(
            try String(contentsOfFile: outside.path + "/secret.json", encoding: .utf8)
                == #"{"id":"secret","kind":"sleep"}"#)
    }

    @Test("a hard link dropped into queued/ is refused before it is read or touched")
    func hardLinkedDropsAreRefused() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server: server)
        let outside = TemporaryDirectory("outside")
        try outside.write(#"{"id":"private","kind":"sleep"}"#, to: "private.json")
        var old = timespec(tv_sec: 1_000_000_000, tv_nsec: 0)
        var times = [old, old]
        #expect(utimensat(AT_FDCWD, outside.path + "/private.json", &times, 0) == 0)
        #expect(link(outside.path + "/private.json", spool.path + "/queued/picked-up.json") == 0)

        try spool.runRound()

        #expect(server.requests.isEmpty)
        #expect(try spool.names(in: .sent).isEmpty)
        let flagged = try spool.ledger().filter { $0.event == .invalid }
        #expect(flagged.count == 1)
        #expect(flagged.first?.detail.contains("hard link") == true, "\(flagged)")
        var info = stat()
        #expect(stat(outside.path + "/private.json", &info) == 0)
        old = info.st_mtim
        #expect(old.tv_sec == 1_000_000_000, "the other name's file kept its time")
    }

    @Test("a person moving an item out of sending/ during a round is a warning, not a failed round")
    func anItemMovedOutOfSendingMidRoundDoesNotStopTheRound() throws {
        let spoolPath = Locked<String?>(nil)
        let server = try LoopbackServer { request, _ in
            if request.header("idempotency-key") == "moved", let path = spoolPath.withLock({ $0 }) {
                rename(path + "/sending/moved@alpha.json", path + "/needsAttention/moved@alpha.json")
            }
            return .respond(.json(201, "{}"))
        }
        let spool = try Self.spool(server: server)
        spoolPath.withLock { $0 = spool.path }
        for id in ["before", "moved", "after"] { try spool.dropRecord(id: id) }

        try spool.runRound()

        #expect(try spool.names(in: .sent) == ["after@alpha.json", "before@alpha.json"])
        #expect(try spool.names(in: .needsAttention) == ["moved@alpha.json"])
        #expect(try spool.names(in: .sending).isEmpty)
    }

    @Test("a workout whose merged route would pass max-record-size needs attention with its bytes unchanged")
    func aRouteThatMakesTheWorkoutTooLargeIsNotMerged() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(maxRecordSize: 160, server: server)
        let workout = #"{"id":"w1","kind":"workout","awaitRoute":true,"data":{"km":5}}"#
        try spool.drop(workout, as: "w1.json")
        try spool.runRound()
        let route = #"{"id":"r1","kind":"route","for":"w1","data":[""# + String(repeating: "p", count: 100) + #""]}"#
        try spool.drop(route, as: "r1.json")
        try spool.runRound()

        #expect(server.requests.isEmpty, "nothing cut or oversized was sent")
        #expect(try spool.names(in: .needsAttention).contains("w1@alpha.json"))
        let kept = try String(contentsOfFile: spool.path + "/needsAttention/w1@alpha.json", encoding: .utf8)
        #expect(kept == workout)
        #expect(try Self.reasons(spool)["w1"]?.contains("max-record-size") == true)
    }

    @Test("a corrected awaitRoute workout dropped under the same id is kept for a person, never deleted")
    func aCorrectedWorkoutIsNotThrownAwayAsADuplicate() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server: server)
        let first = #"{"id":"w2","kind":"workout","awaitRoute":true,"data":{"km":5}}"#
        let corrected = #"{"id":"w2","kind":"workout","awaitRoute":true,"data":{"km":7}}"#
        try spool.drop(first, as: "first.json")
        try spool.runRound()
        try spool.drop(corrected, as: "corrected.json")
        try spool.runRound()

        let flagged = try spool.names(in: .needsAttention)
        #expect(flagged.count == 1, "\(flagged)")
        let kept = try flagged.map { try String(contentsOfFile: spool.path + "/needsAttention/" + $0, encoding: .utf8) }
        #expect(kept == [corrected])
        #expect(
            try String(contentsOfFile: spool.path + "/awaitingRoute/w2@alpha.json", encoding: .utf8) == first)
    }

    @Test("the same workout dropped again after its route was merged is still a harmless duplicate")
    func aRepeatedWorkoutAfterItsRouteIsADuplicate() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server: server)
        let workout = #"{"id":"w3","kind":"workout","awaitRoute":true,"data":{"km":5}}"#
        try spool.drop(workout, as: "w3.json")
        try spool.drop(#"{"id":"r3","kind":"route","for":"w3","data":[1,2]}"#, as: "r3.json")
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["w3@alpha.json"])
        try spool.drop(workout, as: "again.json")
        let summary = try spool.runRound()
        #expect(summary.duplicates == 1)
        #expect(try spool.names(in: .needsAttention).isEmpty)
        #expect(try spool.names(in: .queued).isEmpty)
    }

    @Test("a file dropped under the name of an entry already sent is flagged, never sent over it")
    func anEntryNamedDropCannotReplaceASentEntry() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server: server)
        try spool.drop(#"{"id":"k1","kind":"sleep","v":1}"#, as: "k1.json")
        try spool.runRound()
        try spool.drop(#"{"id":"k1","kind":"sleep","v":2}"#, as: "k1@alpha.json")
        try spool.runRound()

        #expect(server.requests.count == 1)
        #expect(
            try String(contentsOfFile: spool.path + "/sent/k1@alpha.json", encoding: .utf8)
                == #"{"id":"k1","kind":"sleep","v":1}"#)
        let flagged = try spool.names(in: .needsAttention)
        #expect(flagged.count == 1 && flagged[0].hasPrefix("invalid-"), "\(flagged)")
        #expect(try spool.placements().values.allSatisfy { $0.count == 1 })
    }

    @Test("a route that cannot be merged is kept beside its workout, and a second route never replaces the first")
    func routesAreNeverLost() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server: server)
        try spool.drop(#"{"id":"w5","kind":"workout","awaitRoute":true,"data":[1,2]}"#, as: "w5.json")
        try spool.drop(#"{"id":"r5","kind":"route","for":"w5","data":[3]}"#, as: "r5.json")
        try spool.drop(#"{"id":"w6","kind":"workout","awaitRoute":true,"data":{}}"#, as: "w6.json")
        try spool.runRound()
        try spool.drop(#"{"id":"r6","kind":"route","for":"w9","data":[1]}"#, as: "r6.json")
        try spool.runRound()
        try spool.drop(#"{"id":"r6b","kind":"route","for":"w9","data":[2]}"#, as: "r6b.json")
        try spool.runRound()

        let attention = try spool.names(in: .needsAttention)
        #expect(attention.contains("w5@alpha.json") && attention.contains("w5.route.json"), "\(attention)")
        #expect(attention.contains { $0.hasPrefix("invalid-") && $0.contains("r6b") }, "\(attention)")
        #expect(
            try String(contentsOfFile: spool.path + "/awaitingRoute/w9.route.json", encoding: .utf8)
                == #"{"id":"r6","kind":"route","for":"w9","data":[1]}"#)
    }

    @Test("a file dropped under an entry name is sent only if it is a record with that entry's id")
    func entryNamedDropsAreValidatedAsRecords() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server: server)
        try spool.drop("", as: "empty@alpha.json")
        try spool.drop(#"{"id":"mismatch","kind":"sleep"}"#, as: "other@alpha.json")
        try spool.drop("{not json", as: "broken@alpha.json")
        try spool.drop(#"{"id":"fine","kind":"sleep"}"#, as: "fine@alpha.json")
        try spool.drop(#"{"id":"fine","kind":"sleep"}"#, as: "fine#2@alpha.json")

        try spool.runRound()

        #expect(server.requests.compactMap { $0.header("idempotency-key") }.sorted() == ["fine", "fine#2"])
        #expect(try spool.names(in: .needsAttention) == ["broken@alpha.json", "empty@alpha.json", "other@alpha.json"])
        let reasons = try Self.reasons(spool)
        #expect(reasons["other"]?.contains("mismatch") == true, "\(reasons)")
        #expect(reasons["broken"]?.contains("not JSON") == true, "\(reasons)")
    }
}
