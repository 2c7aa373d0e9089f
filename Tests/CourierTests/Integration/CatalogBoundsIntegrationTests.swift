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

/// CatalogBoundsTests against the sink on loopback.
@Suite(.tags(.integration)) struct CatalogBoundsIntegrationTests {
    @Test("the sink serves next_cursor, or nextCursor when asked, and courier pages through either")
    func theSinkServesBothSpellings() throws {
        for spelling in PageCursorName.allCases {
            let directory = TemporaryDirectory("page-cursor")
            let catalogs = try CatalogTests.makeCatalog(in: directory, count: 25)
            let sink = try Sink(directory: directory.path + "/sink", catalogs: catalogs, pageCursor: spelling)
            let server = try LoopbackServer(forwardingTo: sink)
            let spool = try TemporarySpool()
            spool.configuration.catalogs = [
                Catalog(
                    name: try TemporarySpool.subscriberName("products"),
                    url: "http://\(server.server.address)/catalogs/products", pageSize: 10)
            ]
            let report = try CatalogSync(
                session: spool.session, configuration: spool.configuration, catalog: spool.configuration.catalogs[0]
            ).run(full: false)
            #expect(report.pages == 3 && report.upserts == 25, "\(spelling)")
            let first = try #require(server.requests.first)
            guard case .respond(let page) = sink.handle(first) else { throw TestFailure("no answer") }
            let object = try #require(try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any])
            #expect(object[spelling.rawValue] as? String == "10", "\(spelling)")
            #expect(object.keys.filter { $0.lowercased().contains("cursor") } == [spelling.rawValue])
        }
    }
}
