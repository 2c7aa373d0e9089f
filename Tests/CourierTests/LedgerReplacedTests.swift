import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierSpool

/// People edit the ledger: it is a text file (§4). `sed -i`, and editors
/// that write a new file and rename it over the old one, leave a process
/// that opened the day file before appending to a file no name reaches.
@Suite struct LedgerReplacedTests {
    static func line(_ key: String) -> LedgerLine {
        LedgerLine(time: .now(), round: "r", subscriber: "alpha", key: key, event: .accepted, detail: "d")
    }

    @Test("a line committed after a person replaced the day file (sed -i) is in the ledger")
    func aLineAfterTheDayFileWasReplacedIsKept() throws {
        let spool = try TemporarySpool()
        try spool.session.commit(Transition(lines: [Self.line("before")]))
        let day = try #require(try Ledger.dayFiles(in: spool.spool.ledgerDirectory).first?.1)
        let path = spool.path + "/ledger/\(day)"
        // What `sed -i` does: a new file with the edited text, renamed over.
        let edited = try String(contentsOfFile: path, encoding: .utf8) + "# checked by a person\n"
        try edited.write(toFile: path + ".sed", atomically: false, encoding: .utf8)
        #expect(rename(path + ".sed", path) == 0)
        try spool.session.commit(Transition(lines: [Self.line("after")]))
        #expect(try spool.ledger().map(\.key) == ["before", "after"])
    }

    @Test("a line committed after a person removed the day file is in a new day file")
    func aLineAfterTheDayFileWasRemovedIsKept() throws {
        let spool = try TemporarySpool()
        try spool.session.commit(Transition(lines: [Self.line("before")]))
        let day = try #require(try Ledger.dayFiles(in: spool.spool.ledgerDirectory).first?.1)
        #expect(unlink(spool.path + "/ledger/\(day)") == 0)
        try spool.session.commit(Transition(lines: [Self.line("after")]))
        #expect(try spool.ledger().map(\.key) == ["after"])
    }
}
