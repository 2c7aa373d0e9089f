import Foundation
import Glibc
import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// Dropped files read ahead on the reader's thread (`DroppedFileReader`),
/// and what intake does with such a read (`IntakeSession.offer`).
@Suite struct DroppedFileReaderTests {
    static func spool() throws -> TemporarySpool {
        try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/")])
    }

    static func reader(_ spool: TemporarySpool, maximumSize: Int = 1 << 20) throws -> DroppedFileReader {
        try #require(
            DroppedFileReader.start(queued: spool.spool.directory(.queued), maximumSize: maximumSize, depth: 8))
    }

    static func intake(_ spool: TemporarySpool, reader: DroppedFileReader) -> IntakeSession {
        IntakeSession(
            intake: Intake(
                session: spool.session, settings: IntakeSettings(spool.configuration), round: RoundID.make(at: .now())),
            reader: reader)
    }

    /// Renames a new file with `text` over `queued/NAME`, as a script's next
    /// export would.
    static func replace(_ name: String, with text: String, in spool: TemporarySpool) throws {
        try text.write(toFile: spool.path + "/tmp/\(name)", atomically: false, encoding: .utf8)
        #expect(rename(spool.path + "/tmp/\(name)", spool.path + "/queued/\(name)") == 0)
    }

    @Test("the reader gives each file asked for as it read and parsed it, in the order asked, once")
    func itGivesEachReadInOrderOnce() throws {
        let spool = try Self.spool()
        for id in ["a", "b", "c"] { try spool.dropRecord(id: id) }
        let reader = try Self.reader(spool)
        let first = reader.ask([FileName("a.json"), FileName("b.json"), FileName("c.json")], epoch: 7)
        reader.waitForReads()
        for (offset, id) in ["a", "b", "c"].enumerated() {
            let read = try #require(reader.take(first + offset))
            #expect(read.record.id.value == id)
            #expect(read.epoch == 7)
            #expect(read.status?.size == read.record.bytes.count)
        }
        #expect(reader.take(first + 2) == nil)
        #expect(reader.room == reader.depth)
    }

    @Test("a read that comes to anything but a record is left to intake, which reads the file by its own rules")
    func anythingButARecordIsLeftToIntake() throws {
        let spool = try Self.spool()
        try spool.drop("{not json", as: "broken.json")
        try spool.drop(#"{"id":"big","kind":"sleep","pad":"\#(String(repeating: "x", count: 200))"}"#, as: "big.json")
        try spool.dropRecord(id: "fine")
        let reader = try Self.reader(spool, maximumSize: 100)
        let names = ["broken.json", "big.json", "gone.json", "fine.json"].map { FileName($0) }
        let first = reader.ask(names, epoch: 1)
        reader.waitForReads()
        #expect(reader.take(first) == nil)
        #expect(reader.take(first + 1) == nil)
        #expect(reader.take(first + 2) == nil)
        #expect(try #require(reader.take(first + 3)).record.id.value == "fine")
    }

    @Test("reads intake passed over are never handed to it later")
    func passedReadsAreDropped() throws {
        let spool = try Self.spool()
        for id in ["a", "b", "c"] { try spool.dropRecord(id: id) }
        let reader = try Self.reader(spool)
        let first = reader.ask([FileName("a.json"), FileName("b.json"), FileName("c.json")], epoch: 1)
        reader.waitForReads()
        #expect(try #require(reader.take(first + 2)).record.id.value == "c")
        #expect(reader.take(first) == nil)
        #expect(reader.take(first + 1) == nil)
    }

    @Test("an intake group takes files read ahead without reading them again")
    func intakeTakesReadsAhead() throws {
        let spool = try Self.spool()
        let ids = (0..<5).map { "r\($0)" }
        for id in ids { try spool.dropRecord(id: id) }
        let reader = try Self.reader(spool)
        let intake = Self.intake(spool, reader: reader)
        let first = intake.readAhead(ids.map { FileName("\($0).json") })
        reader.waitForReads()
        for (offset, id) in ids.enumerated() {
            try intake.offer(FileName("\(id).json"), kind: .regular, ahead: first + offset)
        }
        _ = try intake.commit()
        #expect(intake.readAheadTaken == 5)
        #expect(intake.report.accepted == 5)
        #expect(try spool.names(in: .queued) == ids.map { "\($0)@alpha.json" })
    }

    @Test(
        "a file renamed over its dropped name after it was read ahead, with no hold of the serial lock, is read again")
    func aReplacedFileReadOutsideTheHoldIsReadAgain() throws {
        let spool = try Self.spool()
        try spool.drop(#"{"id":"old","kind":"sleep"}"#, as: "x.json")
        let reader = try Self.reader(spool)
        let intake = Self.intake(spool, reader: reader)
        // Asked before this intake ever held the lock: another worker could
        // have taken the file in meanwhile, so the name is looked at again.
        let first = intake.readAhead([FileName("x.json")])
        reader.waitForReads()
        try Self.replace("x.json", with: #"{"id":"new","kind":"sleep"}"#, in: spool)
        try intake.offer(FileName("x.json"), kind: .regular, ahead: first)
        _ = try intake.commit()
        #expect(intake.readAheadTaken == 0)
        #expect(try spool.names(in: .queued) == ["new@alpha.json"])
    }

    @Test("a file read ahead under the hold intake still holds is taken as read, and one renamed over it since is kept")
    func aReadUnderTheSameHoldIsTakenAndNothingIsLost() throws {
        let spool = try Self.spool()
        try spool.dropRecord(id: "first")
        try spool.drop(#"{"id":"old","kind":"sleep"}"#, as: "x.json")
        let reader = try Self.reader(spool)
        let intake = Self.intake(spool, reader: reader)
        // The first offer takes the serial lock; the read is asked under it.
        try intake.offer(FileName("first.json"), kind: .regular)
        let first = intake.readAhead([FileName("x.json")])
        reader.waitForReads()
        try Self.replace("x.json", with: #"{"id":"new","kind":"sleep"}"#, in: spool)
        try intake.offer(FileName("x.json"), kind: .regular, ahead: first)
        _ = try intake.commit()
        #expect(intake.readAheadTaken == 1)
        // The record read is kept from its bytes, and the file renamed over
        // its name waits there for the next intake, as without a reader.
        #expect(try spool.names(in: .queued) == ["first@alpha.json", "old@alpha.json", "x.json"])
        #expect(
            try String(contentsOfFile: spool.path + "/queued/x.json", encoding: .utf8)
                == #"{"id":"new","kind":"sleep"}"#)
    }

    @Test("a pass that sends a request per record reads ahead, and one that only sends batches does not")
    func onlyAPerRecordPassReadsAhead() throws {
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/"),
            TemporarySpool.subscriber("beta", url: "http://127.0.0.1:9/"),
        ])
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        #expect(try DeliveryStageTests.pass(spool, mode: .background, transport: transport).readsAhead)
        spool.configuration.subscribers[0].mode = .batch
        #expect(try DeliveryStageTests.pass(spool, mode: .background, transport: transport).readsAhead)
        spool.configuration.subscribers[1].mode = .batch
        #expect(try !DeliveryStageTests.pass(spool, mode: .background, transport: transport).readsAhead)
    }

    @Test("a pass that reads ahead takes every dropped file in once and sends it once")
    func aPassReadingAheadTakesEachFileOnce() throws {
        let spool = try Self.spool()
        let ids = (0..<600).map { "r\($0)" }
        for id in ids { try spool.dropRecord(id: id) }
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        let pass = try DeliveryStageTests.pass(spool, mode: .background, transport: transport)
        #expect(pass.readsAhead)
        let summary = try pass.run()
        #expect(summary.sent == 600)
        #expect(transport.started.count == 600)
        #expect(try spool.names(in: .sent) == ids.map { "\($0)@alpha.json" }.sorted())
        #expect(try spool.names(in: .queued).isEmpty)
        let accepted = try spool.ledger().filter { $0.event == .accepted }.map(\.key)
        #expect(accepted.sorted() == ids.sorted())
    }

    @Test(
        "the reader reads ahead only where the open-file limit leaves room past three groups, folders and connections")
    func itsDepthFollowsTheOpenFileLimit() {
        #expect(Intake.readAheadDepth(openFileLimit: nil, connections: 0, groupSizeBehindCommit: 1024) == 2048)
        #expect(Intake.readAheadDepth(openFileLimit: 524_288, connections: 16, groupSizeBehindCommit: 1024) == 2048)
        #expect(Intake.readAheadDepth(openFileLimit: 4096, connections: 16, groupSizeBehindCommit: 1024) == 752)
        #expect(Intake.readAheadDepth(openFileLimit: 1024, connections: 0, groupSizeBehindCommit: 256) == 0)
        #expect(Intake.readAheadDepth(openFileLimit: 2048, connections: 0, groupSizeBehindCommit: 597) == 0)
    }

    @Test("names looked at ahead come out in listing order, each dropped file with the number of its read")
    func listedNamesCarryTheirReads() throws {
        let spool = try Self.spool()
        try spool.dropRecord(id: "a")
        try spool.dropRecord(id: "b")
        try spool.dropRecord(id: "c")
        try spool.drop("{}", as: "e@alpha.json")
        try #require(mkdir(spool.path + "/queued/folder", 0o750) == 0)
        var names = ListedNames(try spool.spool.directory(.queued).entries())
        var asked: [[String]] = []
        // One at a time: the second call asks for the next dropped file.
        names.readAhead(1) {
            asked.append($0.map(\.description)); return 10
        }
        names.readAhead(1) {
            asked.append($0.map(\.description)); return 20
        }
        var order: [String] = []
        var numbers: [String: Int] = [:]
        while let listed = try names.next() {
            order.append(listed.name.description)
            if let number = listed.readAhead { numbers[listed.name.description] = number }
            #expect((listed.entry != nil) == (listed.name.description == "e@alpha.json"))
        }
        #expect(order.sorted() == ["a.json", "b.json", "c.json", "e@alpha.json", "folder"])
        let dropped = order.filter { $0.hasSuffix(".json") && !$0.contains("@") }
        #expect(asked == [[dropped[0]], [dropped[1]]])
        #expect(numbers == [dropped[0]: 10, dropped[1]: 20])
    }
}
