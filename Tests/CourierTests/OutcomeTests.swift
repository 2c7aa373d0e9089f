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

/// docs/design.md §3's table, row by row, through the one classification function.
@Suite struct OutcomeTests {
    enum Expected: Equatable { case delivered, retry, attention }

    static let rows: [(status: Int, expected: Expected)] = [
        (200, .delivered), (201, .delivered), (202, .delivered), (204, .delivered), (299, .delivered),
        (408, .retry), (429, .retry), (500, .retry), (502, .retry), (503, .retry), (504, .retry), (599, .retry),
        (400, .attention), (401, .attention), (403, .attention), (404, .attention), (409, .attention),
        (410, .attention), (412, .attention), (413, .attention), (422, .attention), (301, .attention),
        (302, .attention), (307, .attention), (308, .attention), (100, .attention),
    ]

    static func kind(_ outcome: DeliveryOutcome) -> Expected {
        switch outcome {
        case .delivered: return .delivered
        case .retryLater: return .retry
        case .needsAttention: return .attention
        }
    }

    @Test(arguments: rows)
    func statusMapsToOutcome(row: (status: Int, expected: Expected)) {
        #expect(Self.kind(DeliveryOutcome.classify(status: row.status, error: nil)) == row.expected)
    }

    @Test func deliveredKeepsItsStatus() {
        #expect(DeliveryOutcome.classify(status: 201, error: nil) == .delivered(status: 201))
    }

    @Test func retryAfterIsCappedAtFiveMinutes() {
        let outcome = DeliveryOutcome.classify(status: 429, error: nil, retryAfter: .seconds(3600))
        #expect(outcome == .retryLater(reason: "HTTP 429", after: .seconds(300)))
        let short = DeliveryOutcome.classify(status: 503, error: nil, retryAfter: .seconds(7))
        #expect(short == .retryLater(reason: "HTTP 503", after: .seconds(7)))
    }

    @Test func retryAfterParsesSecondsAndDates() {
        let now = Timestamp(rfc3339: "2026-11-30T12:00:00Z")!
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse("Mon, 30 Nov 2026 12:00:45 GMT", now: now) == .seconds(45))
        #expect(RetryAfter.parse("Mon, 30 Nov 2026 11:00:00 GMT", now: now) == .zero)
        #expect(RetryAfter.parse("soon", now: now) == nil)
        #expect(RetryAfter.parse("-5", now: now) == nil)
    }
}
