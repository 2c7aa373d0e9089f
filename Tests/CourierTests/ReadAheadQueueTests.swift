import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound

/// The feed's read-ahead queue per subscriber (`DeliveryFeed.Queue`): a
/// round over a million queued entries keeps it topped up, so it must not
/// keep what was taken from it.
@Suite struct ReadAheadQueueTests {
    static func item(_ index: Int) throws -> DeliveryFeed.Item {
        .queued(try #require(EntryName(fileName: FileName("k-\(index)@alpha.json"))))
    }

    @Test("a queue topped up as it is taken, and so never empty, holds no more than twice what waits in it")
    func aQueueThatNeverEmptiesDropsWhatWasTaken() throws {
        var queue = DeliveryFeed.Queue()
        for index in 0..<100 { queue.append(try Self.item(index)) }
        var taken: [String] = []
        for index in 100..<100_000 {
            let next = queue.take()
            taken.append(try #require(next).entry.description)
            queue.append(try Self.item(index))
            #expect(queue.count == 100)
        }
        #expect(queue.stored <= 200, "holds \(queue.stored) items for 100 waiting")
        #expect(taken.prefix(3) == ["k-0@alpha", "k-1@alpha", "k-2@alpha"])
        #expect(taken.last == "k-99899@alpha")
        #expect(queue.peek()?.entry.description == "k-99900@alpha")
        #expect(queue.waiting.count == 100)
    }
}
