import Testing

@testable import CourierPosix
@testable import CourierSupport
@testable import CourierSpool
@testable import CourierRecords
@testable import CourierConfig
@testable import CourierTransport
@testable import CourierRound
@testable import CourierCatalog
@testable import CourierSink
@testable import CourierOperations

@Suite struct SpliceTests {
    @Test func batchResultsAreRead() throws {
        let answer =
            Array(
                #"{"results":[{"idempotency_key":"a","status":"OK"},{"idempotency_key":"b","status":"CONFLICT"}]}"#.utf8
            ) + [10]
        let list = try #require(JSONSplice.value(of: "results", in: answer))
        #expect(list.first == UInt8(ascii: "["))
        let results = try #require(BatchBody.results(in: answer))
        #expect(results["a"]?.status == "OK")
        #expect(results["b"]?.status == "CONFLICT")
    }
}
