import Foundation
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierTransport

/// Retries across rounds (issue 12, item 2): `retry-schedule` puts a
/// transiently failed entry back in queued/ with its next attempt as its
/// modification time.
@Suite struct RetryScheduleTests {
    @Test("a deferral stamp keeps the next attempt in whole seconds and the count in the nanoseconds")
    func stampsRoundTrip() throws {
        let asked = Timestamp(secondsSinceEpoch: 1_800_000_000, nanoseconds: 250_000_000)
        let stamp = DeferralStamp(due: asked, deferrals: 3)
        #expect(stamp.due == Timestamp(secondsSinceEpoch: 1_800_000_001), "rounded up, never earlier than asked")
        #expect(stamp.modified == Timestamp(secondsSinceEpoch: 1_800_000_001, nanoseconds: 3))
        #expect(DeferralStamp(modified: stamp.modified) == stamp)
        #expect(DeferralStamp.cleared(stamp.modified) == Timestamp(secondsSinceEpoch: 1_800_000_001))
    }

    @Test(
        "a time courier did not stamp is no stamp: whole seconds, a touch's nanoseconds",
        arguments: [0, 21, 123_456_789, 999_999_999])
    func otherTimesAreNoStamp(nanoseconds: Int64) {
        #expect(DeferralStamp(modified: Timestamp(secondsSinceEpoch: 1_800_000_000, nanoseconds: nanoseconds)) == nil)
    }
}
