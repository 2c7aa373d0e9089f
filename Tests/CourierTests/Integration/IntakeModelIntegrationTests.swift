import Foundation
import Glibc
import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// Hostile sequences of dropped files against a model of what intake must
/// decide, file by file, in order: repeats in one group, in the next group
/// while the first commits, after it committed; conflicts under one id;
/// records for several subscribers; files flagged halfway through their
/// subscribers; a commit that fails. (Written by an attack on the one table
/// of entries not on disk yet; the handed groups' trials found a listing
/// that lacked them, PipelinedIntakeTests.)
@Suite(.tags(.integration)) struct IntakeModelTests {
    static func spool() throws -> TemporarySpool {
        try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/"),
            TemporarySpool.subscriber("beta", url: "http://127.0.0.1:9/"),
        ])
    }

    /// A random record: few ids, two bodies, subscriber lists that overlap.
    static func record(_ g: inout SeededGenerator) -> (text: String, id: String, subscribers: [String]) {
        let id = ["a", "b", "c"][Int.random(in: 0..<3, using: &g)]
        let x = Int.random(in: 0...1, using: &g)
        let lists: [[String]?] = [nil, ["alpha"], ["beta"], ["beta", "alpha"], ["alpha", "beta"]]
        let list = lists[Int.random(in: 0..<lists.count, using: &g)]
        let field = list.map { #","subscribers":[\#($0.map { "\"\($0)\"" }.joined(separator: ","))]"# } ?? ""
        return (#"{"id":"\#(id)","kind":"sleep","x":\#(x)\#(field)}"#, id, list ?? ["alpha", "beta"])
    }

    /// The model: first bytes per entry; a file is flagged when any of its
    /// entries exists with other bytes, else its new entries are made.
    struct Model {
        var entries: [String: String] = [:]
        var flagged = 0
        var duplicateEntries = 0
        mutating func take(_ text: String, id: String, subscribers: [String]) {
            let names = subscribers.map { "\(id)@\($0).json" }
            if names.contains(where: { entries[$0] != nil && entries[$0] != text }) {
                flagged += 1
                return
            }
            for name in names {
                if entries[name] == nil { entries[name] = text } else { duplicateEntries += 1 }
            }
        }
    }

    static func onDisk(_ spool: TemporarySpool) throws -> [String: String] {
        var found: [String: String] = [:]
        for state in [SpoolState.queued, .sending] {
            for name in try spool.names(in: state) {
                let text = try String(contentsOfFile: spool.path + "/\(state.rawValue)/\(name)", encoding: .utf8)
                #expect(found[name] == nil, "\(name) in two states")
                found[name] = text
            }
        }
        return found
    }

    /// What intake made, against what the model made: every entry with
    /// its first bytes, each flagged file, no dropped file left, one
    /// `accepted` line per entry.
    static func expect(_ spool: TemporarySpool, toMatch model: Model, trial: Int) throws {
        #expect(try onDisk(spool) == model.entries, "trial \(trial)")
        #expect(try spool.names(in: .needsAttention).count == model.flagged, "trial \(trial)")
        #expect(try spool.names(in: .queued).allSatisfy { !$0.hasPrefix("f") }, "trial \(trial)")
        let accepted = try spool.ledger().filter { $0.event == .accepted }
        #expect(accepted.count == model.entries.count, "trial \(trial): \(accepted.map(\.key))")
    }

    @Test("random hostile drops, groups committed on the loop: what intake makes is what the model makes")
    func synchronousGroups() throws {
        var g = SeededGenerator(seed: 1)
        for trial in 0..<40 {
            let spool = try Self.spool()
            var model = Model()
            let intake = PipelinedIntakeTests.intake(spool)
            for index in 0..<Int.random(in: 5...30, using: &g) {
                let (text, id, subscribers) = Self.record(&g)
                try spool.drop(text, as: "f\(index).json")
                model.take(text, id: id, subscribers: subscribers)
                try intake.offer(FileName("f\(index).json"), kind: nil)
                if Int.random(in: 0..<3, using: &g) == 0 {
                    let now = Bool.random(using: &g)
                    _ = try intake.commit(sendNow: { _ in now })
                }
            }
            _ = try intake.commit(sendNow: { _ in false })
            try Self.expect(spool, toMatch: model, trial: trial)
        }
    }

    @Test("random hostile drops, groups handed to the commit thread, done at random later turns: the same")
    func handedGroups() throws {
        var g = SeededGenerator(seed: 2)
        for trial in 0..<40 {
            let spool = try Self.spool()
            var model = Model()
            let intake = PipelinedIntakeTests.intake(spool)
            let commits = GroupCommit(session: spool.session, log: .silent)
            var index = 0
            let files = Int.random(in: 5...30, using: &g)
            while index < files {
                try commits.exclusive { () throws(RoundError) in
                    for _ in 0..<Int.random(in: 1...6, using: &g) where index < files {
                        let (text, id, subscribers) = Self.record(&g)
                        do { try spool.drop(text, as: "f\(index).json") } catch { Issue.record("\(error)") }
                        model.take(text, id: id, subscribers: subscribers)
                        do throws(SpoolError) { try intake.offer(FileName("f\(index).json"), kind: nil) } catch {
                            throw .spool(error)
                        }
                        index += 1
                        if Int.random(in: 0..<2, using: &g) == 0 {
                            let now = Bool.random(using: &g)
                            if let handing = intake.plan(sendNow: { _ in now }) {
                                try intake.hand(handing, to: commits, arrived: { _ in })
                            }
                        }
                    }
                }
                // Sometimes the commits out finish (their done runs), sometimes not.
                if Int.random(in: 0..<3, using: &g) == 0 { try commits.waitForRunning() }
            }
            try commits.exclusive { () throws(RoundError) in
                if let handing = intake.plan(sendNow: { _ in false }) {
                    try intake.hand(handing, to: commits, arrived: { _ in })
                }
            }
            try commits.finish()
            try Self.expect(spool, toMatch: model, trial: trial)
        }
    }

    @Test(
        "a file flagged halfway through its subscribers leaves no entry behind: a later record for that subscriber is accepted"
    )
    func flaggedHalfwayLeavesNothing() throws {
        let spool = try Self.spool()
        try spool.drop(#"{"id":"a","kind":"sleep","subscribers":["alpha"]}"#, as: "one.json")
        // a@beta is new, a@alpha conflicts: the file is flagged.
        try spool.drop(#"{"id":"a","kind":"sleep","subscribers":["beta","alpha"]}"#, as: "two.json")
        try spool.drop(#"{"id":"a","kind":"sleep","subscribers":["beta"]}"#, as: "three.json")
        let intake = PipelinedIntakeTests.intake(spool)
        let commits = GroupCommit(session: spool.session, log: .silent)
        try commits.exclusive { () throws(RoundError) in
            do throws(SpoolError) { try intake.offer(FileName("one.json"), kind: nil) } catch { throw .spool(error) }
            if let handing = intake.plan(sendNow: { _ in false }) {
                try intake.hand(handing, to: commits, arrived: { _ in })
            }
            do throws(SpoolError) {
                try intake.offer(FileName("two.json"), kind: nil)
                try intake.offer(FileName("three.json"), kind: nil)
            } catch { throw .spool(error) }
            if let handing = intake.plan(sendNow: { _ in false }) {
                try intake.hand(handing, to: commits, arrived: { _ in })
            }
        }
        try commits.finish()
        #expect(try spool.names(in: .queued) == ["a@alpha.json", "a@beta.json"])
        #expect(try spool.names(in: .needsAttention).count == 1)
    }

    @Test(
        "a group whose commit on the loop fails leaves nothing in the table: the same record dropped again is accepted, not a duplicate"
    )
    func failedSynchronousCommitForgetsItsEntries() throws {
        let spool = try Self.spool()
        try spool.drop(#"{"id":"a","kind":"sleep","subscribers":["alpha"]}"#, as: "one.json")
        let intake = PipelinedIntakeTests.intake(spool)
        spool.session.faults = FaultPlan(failing: .write, at: 1, with: Errno(EIO))
        try intake.offer(FileName("one.json"), kind: nil)
        #expect(throws: SpoolError.self) { _ = try intake.commit() }
        spool.session.faults = nil
        #expect(try spool.names(in: .queued) == ["one.json"])
        try spool.drop(#"{"id":"a","kind":"sleep","subscribers":["alpha"]}"#, as: "two.json")
        try intake.offer(FileName("two.json"), kind: nil)
        _ = try intake.commit()
        // two.json made the entry; one.json, still dropped, is then its duplicate.
        try intake.offer(FileName("one.json"), kind: nil)
        _ = try intake.commit()
        #expect(try spool.names(in: .queued) == ["a@alpha.json"])
        #expect(try spool.names(in: .needsAttention).isEmpty)
        #expect(try spool.ledger().map(\.event) == [.accepted, .duplicate])
    }
}
