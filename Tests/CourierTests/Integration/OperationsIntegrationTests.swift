import Foundation
import Testing

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

/// OperationsTests with a round against a real subscriber on loopback.
@Suite(.tags(.integration)) struct OperationsIntegrationTests {
    @Test("backfill queues only the kinds the subscriber takes, and says what it left")
    func backfillRespectsKinds() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [
            try TemporarySpool.subscriber("everything", url: server.url),
            try TemporarySpool.subscriber("coach", url: server.url, kinds: ["workout"]),
        ])
        try spool.drop(#"{"id":"s-1","kind":"sleep","time":"2026-11-15T08:00:00Z"}"#, as: "a")
        try spool.drop(#"{"id":"w-1","kind":"workout","time":"2026-11-15T09:00:00Z"}"#, as: "b")
        try spool.runRound()
        let report = try Backfill(session: spool.session, configuration: spool.configuration).run(
            since: try #require(Timestamp(dateOrTime: "2026-11-01")),
            until: try #require(Timestamp(dateOrTime: "2026-12-01")),
            subscriber: try #require(SubscriberName("coach")), from: .sent, dryRun: false)
        #expect(report.queued == ["w-1@coach"])
        #expect(report.notTaken == ["sent/s-1@everything.json: kind sleep"], "\(report.notTaken)")
        #expect(try spool.names(in: .queued) == ["w-1@coach.json"])
        withExtendedLifetime(server) {}
    }
}
