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

/// SinkSignatureTests: courier signing for the sink listening on loopback.
@Suite(.tags(.integration)) struct SinkSignatureIntegrationTests {
    @Test("courier's own signed singles and batches are accepted by a signing sink")
    func courierSignsWhatTheSinkChecks() throws {
        let directory = TemporaryDirectory("sink")
        let sink = try Sink(directory: directory.path, signingSecret: SinkSignatureTests.secret)
        let server = try HTTPServer(handler: sink.handle)
        server.start()
        defer { server.stop() }
        var single = try TemporarySpool.subscriber("single", url: "http://\(server.address)/records")
        single.signingSecret = SinkSignatureTests.secret
        var batch = try BatchTests.batchSubscriber("http://\(server.address)/transactions/batch")
        batch.signingSecret = SinkSignatureTests.secret
        let spool = try TemporarySpool(subscribers: [single, batch])
        for id in ["s-1", "s-2"] { try spool.dropRecord(id: id) }
        try spool.runRound()
        #expect(try spool.names(in: .sent).count == 4)
        #expect(try spool.names(in: .needsAttention).isEmpty)
    }
}
