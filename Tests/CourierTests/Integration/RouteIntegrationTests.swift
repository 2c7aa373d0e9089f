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

/// RouteTests with a round against a real subscriber on loopback.
@Suite(.tags(.integration)) struct RouteIntegrationTests {
    @Test("enqueue takes a route record whatever the subscribers' kinds, as intake does")
    func enqueueTakesRouteRecords() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url, kinds: ["workout"])
        ])
        spool.companions.append(server)
        var enqueuer = Enqueuer(inbox: try SpoolInbox(path: spool.path), configuration: spool.configuration)
        try enqueuer.enqueue(
            Array(#"{"id":"w1","kind":"workout","awaitRoute":true,"data":{}}"#.utf8), source: "workout")
        try enqueuer.enqueue(Array(#"{"id":"r1","kind":"route","for":"w1","data":[1]}"#.utf8), source: "route")
        #expect(throws: Enqueuer.Failure.self) {
            try enqueuer.enqueue(Array(#"{"id":"s1","kind":"sleep"}"#.utf8), source: "sleep")
        }
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["w1@alpha.json"])
        let body = String(decoding: try #require(server.requests.first).body, as: UTF8.self)
        #expect(body.contains(#""route":[1]"#))
    }
}
