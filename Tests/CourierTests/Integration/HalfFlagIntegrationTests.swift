import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// A flag's rename half done: the flagged file under its new name in
/// `needsAttention/` and, as the same file, under its old one (kill -9
/// between `link` and `unlink` where the file system has no
/// RENAME_NOREPLACE, or a power cut on btrfs). Flagging happens from
/// `queued/` (intake, and a file found in a move's way) and from `sending/`
/// (a twin of a settled entry); every such half must be resolved without a
/// person, as issue 20 asks, and never by flagging the same file twice.
@Suite(.tags(.integration)) struct HalfFlagTests {
    static let flagged = "invalid-20261201T000000Z-k1_alpha.json"
    static let entry = #"{"id":"k1","kind":"sleep"}"#
    static let twin = #"{"id":"k1","kind":"sleep","other":"bytes"}"#

    static func spool(_ server: LoopbackServer) throws -> TemporarySpool {
        try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
    }

    /// `name` in `state` made one file with `needsAttention/FLAGGED`, and
    /// the flag's `invalid` line, written before its rename, in the ledger.
    static func halfFlag(_ spool: TemporarySpool, _ name: String, in state: SpoolState, detail: String) throws {
        let path = spool.path
        #expect(link(path + "/\(state.rawValue)/\(name)", path + "/needsAttention/\(flagged)") == 0)
        try spool.session.commit(
            Transition(lines: [
                LedgerLine(
                    time: .now(), round: "r", subscriber: "-", key: flagged, event: .invalid,
                    detail: "\(detail) (dropped as \(name))")
            ]))
    }

    static func links(_ spool: TemporarySpool, _ name: String, in state: SpoolState) throws -> Int? {
        try spool.spool.directory(state).status(of: FileName(name))?.links
    }

    @Test("a twin's flag from sending/ left half done is resolved by the next round, not flagged again")
    func aHalfFlaggedTwinInSendingIsResolved() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server)
        try spool.spool.deliverNewFile(Array(Self.entry.utf8), named: FileName("k1@alpha.json"), into: .sent)
        try spool.spool.deliverNewFile(Array(Self.twin.utf8), named: FileName("k1@alpha.json"), into: .sending)
        try Self.halfFlag(
            spool, "k1@alpha.json", in: .sending,
            detail: "sent/k1@alpha.json already exists; a file dropped under an entry's name cannot replace it")
        try spool.runRound()
        let attention = try spool.names(in: .needsAttention)
        let ledger = try spool.ledgerText()
        #expect(attention == [Self.flagged], "\(attention)\n\(ledger)")
        #expect(try Self.links(spool, Self.flagged, in: .needsAttention) == 1)
        #expect(try spool.names(in: .sending).isEmpty && spool.names(in: .queued).isEmpty)
        #expect(try spool.names(in: .sent) == ["k1@alpha.json"])
        #expect(server.requests.isEmpty)
    }

    @Test("a file in a move's way whose flag was left half done is resolved, not flagged a second time")
    func aHalfFlaggedOccupantIsResolved() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server)
        // A round died with k1 claimed; a script dropped another file
        // under its name, and recovery's flag of it was cut in half.
        try spool.spool.deliverNewFile(Array(Self.entry.utf8), named: FileName("k1@alpha.json"), into: .sending)
        try spool.spool.deliverNewFile(Array(Self.twin.utf8), named: FileName("k1@alpha.json"), into: .queued)
        try Self.halfFlag(
            spool, "k1@alpha.json", in: .queued,
            detail: "queued/k1@alpha.json was in the way of sending/k1@alpha.json moving there")
        try spool.runRound()
        let attention = try spool.names(in: .needsAttention)
        let ledger = try spool.ledgerText()
        #expect(attention == [Self.flagged], "\(attention)\n\(ledger)")
        #expect(try Self.links(spool, Self.flagged, in: .needsAttention) == 1)
        #expect(try spool.names(in: .sent) == ["k1@alpha.json"])
        #expect(
            try String(contentsOfFile: spool.path + "/sent/k1@alpha.json", encoding: .utf8) == Self.entry)
    }

    @Test("a resend of a flagged file left half done goes on to intake, as the resent line says")
    func aHalfResentFlaggedFileIsTakenIn() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try Self.spool(server)
        // Flagged once (say, for an unknown kind since fixed), resent.
        try spool.spool.deliverNewFile(Array(Self.entry.utf8), named: FileName(Self.flagged), into: .needsAttention)
        #expect(link(spool.path + "/needsAttention/\(Self.flagged)", spool.path + "/queued/\(Self.flagged)") == 0)
        try spool.session.commit(
            Transition(lines: [
                LedgerLine(
                    time: .now(), round: "manual", subscriber: "-", key: Self.flagged, event: .resent,
                    detail: "resent by a person: needsAttention/ → queued/")
            ]))
        try spool.runRound()
        let attention = try spool.names(in: .needsAttention)
        let ledger = try spool.ledgerText()
        #expect(attention.isEmpty, "\(attention)\n\(ledger)")
        #expect(try spool.names(in: .sent) == ["k1@alpha.json"])
    }
}
