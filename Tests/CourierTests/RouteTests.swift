import Foundation
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

/// Outdoor workouts and their GPS routes, in every order.
@Suite struct RouteTests {
    static let workout = #"{"id":"w-1","kind":"workout","awaitRoute":true,"data":{"type":"run","km":8.2}}"#
    static let route = #"{"id":"r-1","kind":"route","for":"w-1","data":{"points":[[52.1,4.3],[52.2,4.4]]}}"#
    static let merged =
        #"{"id":"w-1","kind":"workout","awaitRoute":true,"data":{"type":"run","km":8.2,"route":{"points":[[52.1,4.3],[52.2,4.4]]}}}"#

    static func spool() throws -> (TemporarySpool, LoopbackServer) {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url, kinds: ["workout", "route"]),
            TemporarySpool.subscriber("beta", url: server.url, kinds: ["workout"]),
        ])
        spool.companions.append(server)
        return (spool, server)
    }

    @Test func theWorkoutWaitsThenTheRouteIsMergedAndSentInTheSameRound() throws {
        let (spool, server) = try Self.spool()
        try spool.drop(Self.workout, as: "workout.json")
        var summary = try spool.runRound()
        #expect(try spool.names(in: .awaitingRoute) == ["w-1@alpha.json", "w-1@beta.json"])
        #expect(server.requests.isEmpty)
        #expect(summary.sent == 0)

        try spool.drop(Self.route, as: "route.json")
        summary = try spool.runRound()
        #expect(summary.routesAttached == 2)
        #expect(try spool.names(in: .sent) == ["w-1@alpha.json", "w-1@beta.json"])
        #expect(try spool.names(in: .awaitingRoute).isEmpty)
        #expect(server.requests.count == 2, "the route is never sent on its own")
        for request in server.requests {
            #expect(String(decoding: request.body, as: UTF8.self) == Self.merged)
        }
    }

    @Test("a route whose dropped file outlived its merge (a power cut) is a repeat, not a route waiting for nothing")
    func aMergedRoutesLeftoverDropIsARepeat() throws {
        let (spool, server) = try Self.spool()
        // The state scripts/powerloss-test.sh found: the route kept, its drop
        // not yet removed, and then a round that merged and sent it.
        try spool.drop(Self.workout, as: "workout.json")
        try spool.runRound()
        try spool.drop(Self.route, as: "route.json")
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["w-1@alpha.json", "w-1@beta.json"])
        try spool.drop(Self.route, as: "route.json")
        try spool.runRound()
        #expect(try spool.names(in: .awaitingRoute).isEmpty, "the route waits for a workout that has it")
        #expect(try spool.names(in: .queued).isEmpty && spool.names(in: .needsAttention).isEmpty)
        #expect(server.requests.count == 2)
        let repeats = try spool.ledger().filter { $0.event == .duplicate }
        #expect(repeats.map(\.key) == ["r-1"] && repeats.first?.detail.contains("already merged into") == true)
    }

    @Test("a route whose removal a power cut undid, after its workouts were merged and queued, goes at the next round")
    func aMergedRoutesLeftoverFileGoes() throws {
        let (spool, server) = try Self.spool()
        for subscriber in ["alpha", "beta"] {
            try spool.spool.deliverNewFile(
                Array(Self.merged.utf8), named: FileName("w-1@\(subscriber).json"), into: .queued)
        }
        try spool.spool.deliverNewFile(Array(Self.route.utf8), named: FileName("w-1.route.json"), into: .awaitingRoute)
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["w-1@alpha.json", "w-1@beta.json"])
        #expect(try spool.names(in: .awaitingRoute).isEmpty, "no route waits for workouts that have it")
        #expect(server.requests.count == 2)
        #expect(try spool.ledger().contains { $0.event == .duplicate && $0.detail.contains("already merged into") })
    }

    @Test func aRouteThatArrivesFirstWaitsForItsWorkout() throws {
        let (spool, server) = try Self.spool()
        try spool.drop(Self.route, as: "route.json")
        try spool.runRound()
        #expect(try spool.names(in: .awaitingRoute) == ["w-1.route.json"])
        try spool.drop(Self.workout, as: "workout.json")
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["w-1@alpha.json", "w-1@beta.json"])
        #expect(server.requests.map { String(decoding: $0.body, as: UTF8.self) } == [Self.merged, Self.merged])
    }

    @Test func bothInOneDropAreSentTogether() throws {
        let (spool, _) = try Self.spool()
        try spool.drop(Self.route, as: "b-route.json")
        try spool.drop(Self.workout, as: "a-workout.json")
        let summary = try spool.runRound()
        #expect(summary.sent == 2)
        #expect(summary.routesAttached == 2)
    }

    @Test func aRouteThatNeverComesTimesOutAndALateOneStillAttachesOnResend() throws {
        let (spool, server) = try Self.spool()
        spool.configuration.routeWait = .seconds(3600)
        try spool.drop(Self.workout, as: "workout.json")
        try spool.runRound()
        // Two hours later, by the entries' mtimes.
        for name in try spool.names(in: .awaitingRoute) {
            try spool.spool.directory(.awaitingRoute).setModified(FileName(name), to: .now() - .seconds(7200))
        }
        var summary = try spool.runRound()
        #expect(summary.routeTimeouts == 2)
        #expect(try spool.names(in: .needsAttention) == ["w-1@alpha.json", "w-1@beta.json"])
        #expect(try spool.ledger().filter { $0.event == .routeTimeout }.count == 2)

        // The route comes late; it waits, and attaches when a person resends.
        try spool.drop(Self.route, as: "late-route.json")
        try spool.runRound()
        #expect(try spool.names(in: .awaitingRoute) == ["w-1.route.json"])
        _ = try ManualMoves(session: spool.session).resend(try spool.spool.resolve("w-1"))
        summary = try spool.runRound()
        #expect(summary.sent == 2)
        #expect(server.requests.map { String(decoding: $0.body, as: UTF8.self) } == [Self.merged, Self.merged])
        #expect(try spool.names(in: .awaitingRoute).isEmpty)
    }

    @Test("a workout written in the minute before intake waits out all of a short route-wait from its intake")
    func aFreshWorkoutWaitsAllOfAShortRouteWait() throws {
        let (spool, _) = try Self.spool()
        spool.configuration.routeWait = .seconds(30)
        try spool.drop(Self.workout, as: "workout.json")
        // Written 50 s ago: older than route-wait, within the minute a fresh
        // drop may keep its own time for.
        try spool.spool.directory(.queued).setModified(FileName("workout.json"), to: .now() - .seconds(50))
        let summary = try spool.runRound()
        #expect(summary.routeTimeouts == 0)
        #expect(try spool.names(in: .awaitingRoute) == ["w-1@alpha.json", "w-1@beta.json"])
        #expect(try spool.ledger().filter { $0.event == .routeTimeout }.isEmpty)
    }

    @Test func aWorkoutWithoutDataGetsOne() throws {
        let (spool, server) = try Self.spool()
        try spool.drop(#"{"id":"w-1","kind":"workout","awaitRoute":true}"#, as: "w.json")
        try spool.drop(#"{"id":"r-1","kind":"route","for":"w-1"}"#, as: "r.json")
        try spool.runRound()
        let body = String(decoding: try #require(server.requests.first).body, as: UTF8.self)
        #expect(
            body
                == #"{"id":"w-1","kind":"workout","awaitRoute":true,"data":{"route":{"id":"r-1","kind":"route","for":"w-1"}}}"#
        )
    }
}

/// `enqueue` and intake choose subscribers with the same function.
@Suite struct EnqueueRoutingTests {
}
