import Foundation
import Testing

@testable import CourierSink

/// docs/design.md §8, "Batch size", the way systemd runs courier: one
/// `courier run` after another, each a process of its own.
@Suite(.serialized, .tags(.integration)) struct AdaptiveBatchEndToEndTests {
    @Test("the batch size a timeout left is where the next courier run starts")
    func theSizeOutlivesTheProcess() throws {
        // Batches of more than 4 take longer than courier waits.
        let server = try LoopbackServer { request, _ in
            let keys = BatchTests.keys(of: request)
            if keys.count > 4 { return .stall(.seconds(2)) }
            let results = keys.map { #"{"idempotency_key":"\#($0)","status":"OK","etag":"v1"}"# }
            return .respond(.json(200, #"{"results":[\#(results.joined(separator: ","))]}"#))
        }
        let directory = TemporaryDirectory("adaptive-e2e")
        try directory.write(
            """
            [courier]
            spool = spool
            settle = 0s
            background-timeout = 300ms

            [subscriber outbox]
            url = \(server.url)
            mode = batch
            batch-size = 8
            """, to: "courier.conf")
        let config = directory.path + "/courier.conf"
        let binary = try CourierBinary.locate()
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        for index in 0..<8 {
            try directory.write(#"{"id":"a-\#(index)","kind":"order"}"#, to: "spool/queued/a\(index).json")
        }
        let first = try binary.run(["--config", config, "run"])
        #expect(first.output.contains("8 need attention"), "a background round does not retry: \(first.output)")
        let state = try String(contentsOfFile: directory.path + "/spool/.courier/batch-outbox.json", encoding: .utf8)
        #expect(state == #"{"answered":0,"configured":8,"size":4}"# + "\n")
        #expect(try binary.run(["--config", config, "status"]).output.contains("batches to outbox: size 4"))

        for index in 0..<8 {
            try directory.write(#"{"id":"b-\#(index)","kind":"order"}"#, to: "spool/queued/b\(index).json")
        }
        let second = try binary.run(["--config", config, "run"])
        #expect(second.output.contains("8 sent"), "\(second.output)")
        #expect(server.requests.map { BatchTests.keys(of: $0).count } == [8, 4, 4])
    }
}
