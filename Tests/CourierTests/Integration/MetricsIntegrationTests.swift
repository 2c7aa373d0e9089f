import Foundation
import Testing

@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// The metrics file against Prometheus's own checker.
@Suite(.tags(.integration)) struct MetricsIntegrationTests {
    @Test("promtool check metrics accepts every family at once", .needs("promtool"))
    func promtoolAcceptsEveryFamily() throws {
        let spool = try MetricsTests.spool()
        let now = Timestamp.now()
        try spool.spool.deliverNewFile(Array("{}".utf8), named: FileName("d@beta.json"), into: .queued)
        try spool.spool.directory(.queued).setModified(
            FileName("d@beta.json"), to: DeferralStamp(due: now + .seconds(600), deferrals: 1).modified)
        try spool.drop(#"{"id":"new","kind":"k"}"#, as: "an \"odd\" name.json")
        let failed = NotifierHealth(working: false, detail: "exited with status 1", time: "t", round: "r")
        try spool.spool.writeControlFile(NotifierHealth.file, Array(try JSONEncoder().encode(failed)))
        let file = MetricsFile(
            path: spool.directory.path + "/courier.prom", session: spool.session,
            catalogs: [try TemporarySpool.subscriberName("products")],
            subscribers: spool.configuration.subscribers.map(\.name),
            scheduled: [try TemporarySpool.subscriberName("beta")], notifierConfigured: true)
        // The round's own intake would take the deferred entry's stamp away.
        try file.write(summary: nil, exitStatus: 0)
        let text = try String(contentsOfFile: spool.directory.path + "/courier.prom", encoding: .utf8)
        for family in [
            "courier_items{", "courier_oldest_item_age_seconds{", "courier_deferred_items{",
            "courier_next_attempt_timestamp_seconds{", "courier_notifier_up ",
            "courier_catalog_last_success_timestamp_seconds{", "courier_last_round_timestamp_seconds ",
        ] {
            #expect(text.contains("\n" + family), "\(family) in \(text)")
        }
        let check = try Shell.run(
            ["sh", "-c", "promtool check metrics < \"$0\"", spool.directory.path + "/courier.prom"])
        #expect(check.status == 0 && check.output.isEmpty, "\(check.output)")
    }
}
