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
