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

/// OutboxArchitectureTests with rounds against the sink on loopback.
@Suite(.tags(.integration)) struct OutboxArchitectureIntegrationTests {
    @Test(
        "an update names its version as the architecture's If-Match: a numeric etag, an escaped op, a delete's version")
    func everyUpdateCarriesItsPrecondition() throws {
        let server = try ArchitectureBackend.outbox()
        let spool = try OutboxArchitectureTests.spool(server)
        try spool.drop(
            #"{"id":"order-7-u2","kind":"order","op":"UPDATE","updates":"order-7","etag":5,"data":{"qty":2}}"#,
            as: "u1.json")
        try spool.drop(
            #"{"id":"order-8-u2","kind":"order","op":"\u0055PDATE","entity_id":"order-8","etag":"v1"}"#, as: "u2.json")
        try spool.drop(
            #"{"id":"order-9-d","kind":"order","op":"DELETE","entity_id":"order-9","version":3}"#, as: "d.json")
        try spool.runRound()
        #expect(try spool.names(in: .sent).count == 3, "\((try? spool.ledgerText()) ?? "")")
        let items = OutboxArchitectureTests.items(server)
        #expect(items["order-7-u2"]?["if_match"] as? String == #""5""#)
        #expect(items["order-8-u2"]?["op"] as? String == "UPDATE")
        #expect(items["order-8-u2"]?["if_match"] as? String == #""v1""#)
        #expect(items["order-9-d"]?["op"] as? String == "DELETE")
        #expect(items["order-9-d"]?["if_match"] as? String == #""3""#)

        // Sent one by one, the same tags are If-Match headers.
        let single = try LoopbackServer(status: 200)
        let one = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: single.url)])
        try one.drop(#"{"id":"order-7-u2","kind":"order","op":"UPDATE","etag":5}"#, as: "u1.json")
        try one.drop(#"{"id":"order-8-u2","kind":"order","op":"\u0055PDATE","version":"7"}"#, as: "u2.json")
        try one.runRound()
        let tags = Dictionary(
            uniqueKeysWithValues: single.requests.map { ($0.header("idempotency-key") ?? "", $0.header("if-match")) })
        #expect(tags["order-7-u2"] == #""5""# && tags["order-8-u2"] == #""7""#, "\(tags)")
    }

    @Test("the sink finds the entity of an update by its client_id, so its if_match is checked against that entity")
    func theSinkChecksTheEntityNamed() throws {
        let directory = TemporaryDirectory("outbox-sink")
        let sink = try Sink(directory: directory.path + "/sink")
        let server = try LoopbackServer(forwardingTo: sink)
        let spool = try TemporarySpool(subscribers: [
            BatchTests.batchSubscriber("http://\(server.server.address)/transactions/batch")
        ])
        try spool.dropRecord(id: "order-7", kind: "order")
        try spool.runRound()
        let entity = try #require(RecordID("order-7"))
        let kept = try EntityTagStore(spool: spool.spool).tag(of: entity, from: TemporarySpool.subscriberName("batchy"))
        let etag = try #require(kept?.etag)
        try spool.dropRecord(
            id: "order-7-u2", kind: "order", extra: #","op":"UPDATE","entity_id":"order-7","etag":"\#(etag)""#)
        try spool.dropRecord(
            id: "order-7-u3", kind: "order", extra: #","op":"UPDATE","entity_id":"order-7","etag":"old""#)
        try spool.runRound()
        #expect(try spool.names(in: .sent).contains("order-7-u2@batchy.json"), "\((try? spool.ledgerText()) ?? "")")
        #expect(try spool.names(in: .needsAttention) == ["order-7-u3@batchy.json"])
        withExtendedLifetime(directory) {}
    }
}
