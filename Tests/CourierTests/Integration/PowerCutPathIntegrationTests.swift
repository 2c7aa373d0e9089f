import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// The in-process power cut (`FaultPlan(powerCutAtSync:)`) over round
/// paths PowerCutTests' round does not take: `send-now --attention`'s
/// requeue, a route merged into its waiting workouts, intake flagging a
/// file, a twin flagged from `sending/`. At every sync the power goes; the
/// machine comes back (a new session), the command runs again as a person
/// or a timer would, then a round: every record must reach where it is for,
/// nothing may need attention because of the cut, and no file may be left
/// under two names.
@Suite(.tags(.integration), .serialized) struct PowerCutPathTests {
    struct Path: Sendable {
        let name: String
        let setUp: @Sendable () throws -> (TemporarySpool, LoopbackServer)
        /// The command the cut interrupts, run again after the reboot.
        let act: @Sendable (SpoolSession, TemporarySpool) throws -> Void
        /// What must hold once the command ran again and a round after it.
        let expect: @Sendable (TemporarySpool, LoopbackServer, String) throws -> Void
    }

    static func round(_ session: SpoolSession, _ spool: TemporarySpool, attention: Bool = false) throws {
        var round = Round(session: session, configuration: spool.configuration, mode: .background)
        round.retryAttention = attention
        _ = try round.run(wait: true)
    }

    static func makeSpool(kinds: Set<String>? = nil) throws -> (TemporarySpool, LoopbackServer) {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url, kinds: kinds)])
        spool.companions.append(server)
        return (spool, server)
    }

    static func links(_ spool: TemporarySpool) throws -> [String] {
        var shared: [String] = []
        for state in SpoolState.allCases {
            for name in try spool.names(in: state) {
                let status = try spool.spool.directory(state).status(of: FileName(name))
                if (status?.links ?? 1) > 1 { shared.append("\(state.rawValue)/\(name)") }
            }
        }
        return shared
    }

    static let ids = ["a-0", "a-1", "a-2"]

    static let paths: [Path] = [
        Path(
            name: "send-now --attention",
            setUp: {
                let (spool, server) = try makeSpool()
                for id in ids {
                    try spool.spool.deliverNewFile(
                        Array(#"{"id":"\#(id)","kind":"sleep"}"#.utf8), named: FileName("\(id)@alpha.json"),
                        into: .needsAttention)
                }
                try spool.session.commit(
                    Transition(
                        lines: ids.map { id in
                            LedgerLine(
                                time: .now(), round: "r", subscriber: "alpha", key: id, event: .needsAttention,
                                status: 503, attempt: 1, detail: "tried once (HTTP 503): down")
                        }))
                return (spool, server)
            },
            act: { session, spool in try round(session, spool, attention: true) },
            expect: { spool, _, label throws in
                #expect(try spool.names(in: .sent) == ids.map { "\($0)@alpha.json" }, "\(label)")
                #expect(try spool.names(in: .needsAttention).isEmpty, "\(label)")
            }),
        Path(
            name: "a route merged into its waiting workout",
            setUp: {
                let (spool, server) = try makeSpool(kinds: ["workout", "route"])
                try spool.drop(RouteTests.workout, as: "workout.json")
                try spool.runRound()
                try spool.drop(RouteTests.route, as: "route.json")
                return (spool, server)
            },
            act: { session, spool in try round(session, spool) },
            expect: { spool, server, label throws in
                #expect(try spool.names(in: .sent) == ["w-1@alpha.json"], "\(label)")
                #expect(try spool.names(in: .awaitingRoute).isEmpty, "\(label)")
                #expect(try spool.names(in: .needsAttention).isEmpty, "\(label)")
                #expect(
                    server.requests.allSatisfy { String(decoding: $0.body, as: UTF8.self) == RouteTests.merged },
                    "\(label)")
            }),
        Path(
            name: "intake flagging a file",
            setUp: {
                let (spool, server) = try makeSpool()
                try spool.drop("not json at all", as: "bad.json")
                try spool.dropRecord(id: "ok")
                return (spool, server)
            },
            act: { session, spool in try round(session, spool) },
            expect: { spool, _, label throws in
                #expect(try spool.names(in: .sent) == ["ok@alpha.json"], "\(label)")
                let flagged = try spool.names(in: .needsAttention)
                #expect(flagged.count == 1 && flagged.allSatisfy { $0.hasSuffix("-bad.json") }, "\(label): \(flagged)")
            }),
        Path(
            name: "a twin flagged from sending/",
            setUp: {
                let (spool, server) = try makeSpool()
                try spool.spool.deliverNewFile(
                    Array(#"{"id":"t","kind":"sleep"}"#.utf8), named: FileName("t@alpha.json"), into: .sent)
                try spool.drop(#"{"id":"t","kind":"sleep","other":1}"#, as: "t@alpha.json")
                try spool.dropRecord(id: "ok")
                return (spool, server)
            },
            act: { session, spool in try round(session, spool) },
            expect: { spool, _, label throws in
                #expect(try spool.names(in: .sent) == ["ok@alpha.json", "t@alpha.json"], "\(label)")
                let flagged = try spool.names(in: .needsAttention)
                #expect(
                    flagged.count == 1 && flagged.allSatisfy { $0.hasSuffix("-t_alpha.json") }, "\(label): \(flagged)")
            }),
    ]

    @Test(
        "a power cut at every sync of send-now --attention, a route merge, a flag and a twin's flag, then the command again and a round, loses nothing and flags nothing"
    )
    func everyRoundPathSurvivesAPowerCut() throws {
        for path in Self.paths {
            let sweep = try FaultSweep {
                let (counting, countingServer) = try path.setUp()
                let counter = FaultPlan()
                counting.session.faults = counter
                try path.act(counting.session, counting)
                counting.session.faults = nil
                try path.expect(counting, countingServer, "\(path.name) without a cut")
                return counter.counts
            }
            let syncs = sweep.most[.sync] ?? 0
            #expect((sweep.least[.sync] ?? 0) >= 2, "\(path.name): \(sweep.least)")
            for sync in sweep.occurrences(of: .sync) {
                let label = "\(path.name): power cut at sync #\(sync) of \(syncs)"
                guard
                    let (spool, server, doubled) = try sweep.reach(
                        label, .sync, sync,
                        {
                            let (spool, server) = try path.setUp()
                            let doubled = Set(try spool.placements().filter { $0.value.count > 1 }.keys)
                            let cut = FaultPlan(powerCutAtSync: sync)
                            spool.session.faults = cut
                            _ = try? path.act(spool.session, spool)
                            return (spool, server, doubled, cut)
                        }, reached: { $0.3.powerCut?.happened == true }
                    ).map({ ($0.0, $0.1, $0.2) })
                else { continue }
                // Names a script put in two states are its own doing.
                let placed = try spool.placements().filter { !doubled.contains($0.key) }
                #expect(placed.values.allSatisfy { $0.count == 1 }, "\(label): right after the cut")
                let afterCut = try spool.ledgerText()
                let attentionAfterCut = try spool.names(in: .needsAttention)
                // A new process: its staging names are not this one's, and
                // this one's leftovers are a dead writer's.
                for name in try spool.spool.tmp.sortedNames() { try spool.spool.tmp.remove(name) }
                let rebooted = try SpoolSession(path: spool.path, worker: nil)
                try path.act(rebooted, spool)
                try Self.round(rebooted, spool)
                let now = try spool.ledgerText()
                let story = "\(label)\nafter the cut: \(attentionAfterCut)\n\(afterCut)\nnow:\n\(now)"
                try path.expect(spool, server, story)
                #expect(try Self.links(spool).isEmpty, "\(label)")
                #expect(try spool.placements().values.allSatisfy { $0.count == 1 }, "\(label)")
            }
        }
    }
}
