import Testing

@testable import CourierIdentifiers
@testable import CourierRound

@Suite struct SubscriberTableTests {
    /// Names short enough to live inside their String and long ones that do
    /// not, each made afresh from its bytes so that no two equal names share
    /// storage (as a name parsed from a file name and one from the
    /// configuration do not).
    static func name(_ number: Int) throws -> SubscriberName {
        let text = number.isMultiple(of: 3) ? "a-subscriber-with-a-long-name-\(number)" : "s\(number)"
        return try #require(SubscriberName(String(decoding: Array(text.utf8), as: UTF8.self)))
    }

    @Test(arguments: [0, 1, 2, 3])
    func aTableAnswersAsADictionaryDoesThroughAnyMixOfChanges(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var table = SubscriberTable<[Int]>()
        var model: [SubscriberName: [Int]] = [:]
        // Up to 40 names: past the scan limit and back below it.
        for step in 0..<4_000 {
            let name = try Self.name(Int.random(in: 0..<40, using: &generator))
            switch Int.random(in: 0..<6, using: &generator) {
            case 0, 1:
                table[name, default: []].append(step)
                model[name, default: []].append(step)
            case 2:
                if model[name]?.isEmpty == false {
                    table[name]?.removeFirst()
                    model[name]?.removeFirst()
                }
            case 3:
                #expect(table.removeValue(forKey: name) == model.removeValue(forKey: name))
            case 4:
                table[name] = nil
                model[name] = nil
            default:
                table[name] = [step]
                model[name] = [step]
            }
            #expect(table[name] == model[name], "step \(step), \(name)")
            #expect(table.count == model.count)
        }
        for number in 0..<40 {
            let name = try Self.name(number)
            #expect(table[name] == model[name])
            #expect(table[name, default: [-1]] == model[name, default: [-1]])
        }
    }

    @Test func aValueTakenOutInPlaceAndSetToNilRemovesItsName() throws {
        let one = try Self.name(1), two = try Self.name(2)
        var table = SubscriberTable<Int>()
        table[one] = 1
        table[two, default: 0] += 2
        if table[one] != nil { table[one] = nil }
        #expect(table[one] == nil)
        #expect(table.count == 1)
        #expect(table[two] == 2)
        #expect(table.isEmpty == false)
        table.removeValue(forKey: two)
        #expect(table.isEmpty)
    }
}

extension SubscriberTableTests {
    struct Stop: Error {}

    static func set(_ value: inout Int?, to new: Int?) throws {
        value = new
        throw Stop()
    }

    @Test("a change cut short by a throw leaves the table as it leaves a dictionary: the value as set")
    func aChangeCutShortByAThrowIsKept() throws {
        let one = try Self.name(1), three = try Self.name(3), four = try Self.name(4)
        var table = SubscriberTable<Int>()
        var model: [SubscriberName: Int] = [:]
        table[one] = 1
        model[one] = 1
        table[four] = 4
        model[four] = 4
        for (name, new) in [(one, nil), (three, 3), (four, 40)] as [(SubscriberName, Int?)] {
            #expect(throws: Stop.self) { try Self.set(&table[name], to: new) }
            #expect(throws: Stop.self) { try Self.set(&model[name], to: new) }
            #expect(table[name] == model[name])
        }
        #expect(table.count == model.count)
    }
}
