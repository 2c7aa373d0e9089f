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

    /// Rewrites `queued/NAME` in place, the same inode, as `echo … > file` does.
    static func rewriteInPlace(_ name: String, with text: String, in spool: TemporarySpool) throws {
        let fd = open(spool.path + "/queued/" + name, O_WRONLY | O_TRUNC)
        try #require(fd >= 0)
        defer { close(fd) }
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
    }

    /// What a scripted transport's answers do beside the pass, once.
    final class Meddler: @unchecked Sendable {
        var answers = 0
        var touched: [String] = []
    }

    /// A pass over 2,000 dropped files whose 20th answer has `meddle` done to
    /// every file still under its dropped name, after the reader has had
    /// time to read them ahead.
    static func passMeddledWith(_ meddle: @escaping (String, String) -> Void) throws -> (
        TemporarySpool, Meddler, ScriptedTransport, RoundSummary
    ) {
        let spool = try Self.spool()
        for index in 0..<2000 { try spool.dropRecord(id: String(format: "r%04d", index)) }
        let meddler = Meddler()
        let path = spool.path
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in
            meddler.answers += 1
            if meddler.answers == 20 {
                usleep(300_000)
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path + "/queued")) ?? []
                for name in names where !name.contains("@") && name.hasSuffix(".json") {
                    meddle(path + "/queued/" + name, String(name.dropLast(5)))
                    meddler.touched.append(String(name.dropLast(5)))
                }
            }
            return ScriptedTransport.response(201)
        }
        let pass = try DeliveryStageTests.pass(spool, mode: .background, transport: transport)
        #expect(pass.readsAhead)
        let summary = try pass.run()
        return (spool, meddler, transport, summary)
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

    @Test("the reader starts no read while a mebibyte of its reads wait for intake, and reads on as intake takes them")
    func itHoldsNoMoreThanItsBytesAhead() throws {
        let spool = try Self.spool()
        let padding = String(repeating: "p", count: 600_000)
        for id in ["a", "b", "c"] { try spool.dropRecord(id: id, extra: #","pad":"\#(padding)""#) }
        let reader = try Self.reader(spool)
        let first = reader.ask([FileName("a.json"), FileName("b.json"), FileName("c.json")], epoch: 1)
        let started = MonotonicInstant.now()
        while reader.bytesHeld < 1_200_000 && MonotonicInstant.now() - started < .seconds(30) { usleep(1000) }
        #expect(reader.bytesHeld >= 1_200_000, "two files read")
        usleep(200_000)
        #expect(reader.bytesHeld < 1_800_000, "the third waits: \(reader.bytesHeld) bytes held")
        #expect(try #require(reader.take(first)).record.id.value == "a")
        reader.waitForReads()
        #expect(try #require(reader.take(first + 1)).record.id.value == "b")
        #expect(try #require(reader.take(first + 2)).record.id.value == "c")
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

    @Test(
        "a file renamed over its dropped name after it was read ahead under the hold intake still holds is read again")
    func aReplacedFileReadUnderTheSameHoldIsReadAgain() throws {
        let spool = try Self.spool()
        try spool.dropRecord(id: "first")
        try spool.drop(#"{"id":"old","kind":"sleep"}"#, as: "x.json")
        let reader = try Self.reader(spool)
        let intake = Self.intake(spool, reader: reader)
        // The first offer takes the serial lock; the read is asked under it.
        try intake.offer(FileName("first.json"), kind: .regular)
        let first = intake.readAhead([FileName("x.json")])
        reader.waitForReads()
        // The file read loses its last name: its change time moves.
        try Self.replace("x.json", with: #"{"id":"new","kind":"sleep"}"#, in: spool)
        try intake.offer(FileName("x.json"), kind: .regular, ahead: first)
        _ = try intake.commit()
        #expect(intake.readAheadTaken == 0)
        // As intake reading the file only now would have found it.
        #expect(try spool.names(in: .queued) == ["first@alpha.json", "new@alpha.json"])
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

    @Test("a file rewritten in place after it was read ahead is read again, under the same hold or not")
    func aFileRewrittenInPlaceIsReadAgain() throws {
        for sameHold in [false, true] {
            let spool = try Self.spool()
            try spool.dropRecord(id: "first")
            try spool.drop(#"{"id":"old","kind":"sleep"}"#, as: "x.json")
            let reader = try Self.reader(spool)
            let intake = Self.intake(spool, reader: reader)
            if sameHold { try intake.offer(FileName("first.json"), kind: .regular) }
            let first = intake.readAhead([FileName("x.json")])
            reader.waitForReads()
            try Self.rewriteInPlace("x.json", with: #"{"id":"new","kind":"sleep","n":2}"#, in: spool)
            try intake.offer(FileName("x.json"), kind: .regular, ahead: first)
            _ = try intake.commit()
            #expect(intake.readAheadTaken == 0)
            let accepted = try spool.ledger().filter { $0.event == .accepted }.map(\.key)
            #expect(accepted == (sameHold ? ["first"] : []) + ["new"])
            // Not offered without the hold: it waits under its dropped name.
            #expect(try spool.names(in: .queued) == [sameHold ? "first@alpha.json" : "first.json", "new@alpha.json"])
        }
    }

    @Test("dropped files rewritten in place while a pass sends are taken in as they are now, and none is set aside")
    func filesRewrittenWhileAPassSendsAreTakenAsTheyAre() throws {
        let (spool, meddler, transport, _) = try Self.passMeddledWith { path, id in
            let fd = open(path, O_WRONLY | O_TRUNC)
            guard fd >= 0 else { return }
            let bytes = Array(#"{"id":"new-\#(id)","kind":"sleep"}"#.utf8)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        let accepted = Set(try spool.ledger().filter { $0.event == .accepted }.map(\.key))
        #expect(!meddler.touched.isEmpty)
        #expect(meddler.touched.filter { accepted.contains($0) }.isEmpty, "taken in under the bytes read before")
        #expect(meddler.touched.allSatisfy { accepted.contains("new-" + $0) })
        #expect(transport.started.count == 2000)
        #expect(try spool.names(in: .needsAttention).isEmpty)
        #expect(try spool.names(in: .queued).isEmpty)
    }

    @Test("dropped files removed while a pass sends are not taken in, though they were read ahead")
    func filesRemovedWhileAPassSendsAreNotTakenIn() throws {
        let (spool, meddler, transport, summary) = try Self.passMeddledWith { path, _ in unlink(path) }
        let accepted = Set(try spool.ledger().filter { $0.event == .accepted }.map(\.key))
        #expect(!meddler.touched.isEmpty)
        #expect(meddler.touched.filter { accepted.contains($0) }.isEmpty)
        #expect(summary.sent == 2000 - meddler.touched.count)
        #expect(transport.started.count == summary.sent)
    }

    @Test("a pass reading ahead over 3,000 files takes each record once, a repeat as a duplicate, a conflict as one")
    func aPassReadingAheadKeepsTheDuplicateCheck() throws {
        let spool = try Self.spool()
        for index in 0..<1500 {
            let id = String(format: "d%04d", index)
            try spool.drop(#"{"id":"\#(id)","kind":"sleep"}"#, as: "\(id).json")
            let again = index < 1000 ? #"{"id":"\#(id)","kind":"sleep"}"# : #"{"id":"\#(id)","kind":"sleep","x":1}"#
            try spool.drop(again, as: "\(index < 1000 ? "copy" : "other")-\(id).json")
        }
        let transport = ScriptedTransport(clock: FakeClock()) { _, _ in ScriptedTransport.response(201) }
        let summary = try DeliveryStageTests.pass(spool, mode: .background, transport: transport).run()
        let ledger = try spool.ledger()
        let accepted = ledger.filter { $0.event == .accepted }.map(\.key)
        #expect(accepted.count == 1500 && Set(accepted).count == 1500)
        #expect(summary.sent == 1500 && transport.started.count == 1500)
        #expect(ledger.filter { $0.event == .duplicate }.count == 1000)
        #expect(ledger.filter { $0.event == .invalid }.count == 500)
        #expect(try spool.names(in: .queued).isEmpty)
    }

    @Test("waiting for the reader ends where it waits for intake to take what it read")
    func waitingForTheReaderEndsAtItsByteLimit() throws {
        let spool = try Self.spool()
        let padding = String(repeating: "x", count: 700_000)
        for index in 0..<4 { try spool.dropRecord(id: "b\(index)", extra: #","pad":"\#(padding)""#) }
        let reader = try Self.reader(spool)
        let first = reader.ask((0..<4).map { FileName("b\($0).json") }, epoch: 1)
        reader.waitForReads()
        #expect(reader.bytesHeld >= DroppedFileReader.byteLimit)
        var taken = 0
        for offset in 0..<4 where reader.take(first + offset) != nil { taken += 1 }
        #expect(taken >= 2, "the two read before the limit are handed over")
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
