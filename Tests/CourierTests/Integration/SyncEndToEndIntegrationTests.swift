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

/// docs/design.md §8 between two real processes: `courier` and `courier sink`.
@Suite(.serialized, .tags(.integration)) struct SyncEndToEndTests {
    @Test func batchesAndCatalogsBetweenCourierAndTheSink() throws {
        let directory = TemporaryDirectory("sync-e2e")
        let catalogs = try CatalogTests.makeCatalog(in: directory, count: 250)
        let binary = try CourierBinary.locate()
        let (sink, port) = try binary.startSink(
            ["--dir", directory.path + "/sink", "--catalogs", catalogs], errors: directory.path + "/sink.log")
        defer {
            sink.terminate()
            sink.waitUntilExit()
        }
        let base = "http://127.0.0.1:\(port)"
        try directory.write(
            """
            [courier]
            spool = spool
            device-id = e2e-device
            settle = 0s
            metrics-file = metrics.prom

            [subscriber outbox]
            url = \(base)/transactions/batch
            mode = batch
            batch-size = 7
            gzip = true

            [catalog products]
            url = \(base)/catalogs/products
            page-size = 40
            ack-url = \(base)/sync/ack
            """, to: "courier.conf")
        let config = directory.path + "/courier.conf"
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        for index in 0..<20 {
            try directory.write(
                #"{"id":"o-\#(index)","kind":"order","data":{"n":\#(index)}}"#, to: "spool/queued/o-\(index).json")
        }
        // One that conflicts: the sink already holds key o-19 with another body.
        let conflicting = Array(#"{"items":[{"idempotency_key":"o-19","payload":{"id":"o-19","other":true}}]}"#.utf8)
        let request =
            "POST /transactions/batch HTTP/1.1\r\nContent-Length: \(conflicting.count)\r\nConnection: close\r\n\r\n"
        _ = try SinkTests.exchange(Array(request.utf8) + conflicting, port: port)

        let round = try binary.run(["--config", config, "run"])
        #expect(round.status == 0, "\(round.error)")
        #expect(round.output.contains("19 sent, 1 need attention"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/sink/new").count == 20)

        let sync = try binary.run(["--config", config, "catalog", "sync"])
        #expect(sync.status == 0, "\(sync.error)")
        // Out of the box the sync keys deltas by the server's time, and the
        // sink pages with next_cursor: the sync architecture's shape.
        #expect(sync.output.contains("full sync to server time "), "\(sync.output)")
        #expect(sync.output.contains("(version 1249): 250 upserts, 0 tombstones, 7 pages"), "\(sync.output)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/catalogs/products").count
                == 250)

        let status = try binary.run(["--config", config, "status", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any])
        let batch = try #require((object["batches"] as? [String: [String: Any]])?["outbox"])
        #expect(batch["batchSize"] as? Int == 7)
        #expect(batch["conflicts"] as? Int == 1)
        #expect((batch["conflictRate"] as? Double).map { abs($0 - 0.05) < 1e-9 } == true)
        let catalog = try #require((object["catalogs"] as? [String: [String: Any]])?["products"])
        #expect(catalog["version"] as? Int == 1249)
        #expect((catalog["since"] as? String).flatMap(Timestamp.init(rfc3339:)) != nil, "\(catalog)")
        #expect(catalog["lastDurationMs"] is Int)
        // `catalog status --json` says the same with the same names: one object.
        let catalogStatus = try binary.run(["--config", config, "catalog", "status", "--json"])
        let listed = try #require(
            try JSONSerialization.jsonObject(with: Data(catalogStatus.output.utf8)) as? [String: Any])
        let first = try #require((listed["catalogs"] as? [[String: Any]])?.first)
        func canonical(_ value: [String: Any]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
        }
        #expect(try canonical(first) == canonical(catalog))
        #expect(!status.output.contains("\\/") && !catalogStatus.output.contains("\\/"), "no escaped slashes")

        let metrics = try String(contentsOfFile: directory.path + "/metrics.prom", encoding: .utf8)
        #expect(metrics.contains(#"courier_batch_size_limit{subscriber="outbox"} 7"#))
        // Twenty items in batches of at most seven: the size as sent.
        let sent = metrics.split(separator: "\n").first { $0.hasPrefix(#"courier_batch_size{subscriber="outbox"} "#) }
        let size = sent.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
        #expect(size.map { $0 > 5 && $0 <= 7 } == true, "\(sent ?? "no courier_batch_size")")
        #expect(metrics.contains(#"courier_batch_conflict_ratio{subscriber="outbox"} 0.05"#))
        // The sync rewrote the file the round wrote: the version is there.
        #expect(metrics.contains(#"courier_catalog_version{catalog="products"} 1249"#))
        // Every request of a round and a sync carried its session id into the ledger.
        let ledger = try String(
            contentsOfFile: directory.path + "/spool/ledger/\(Timestamp.now().utcDay).tsv", encoding: .utf8)
        #expect(ledger.contains("\tproducts\tcatalog\tcatalogSynced\t200\t7\t"))
    }
}
