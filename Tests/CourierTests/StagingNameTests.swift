import Foundation
import Glibc
import Testing

@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierSpool

/// tmp/ of a spool opened to producers (`init --group`) is theirs to write
/// too: a name courier is about to stage under must not be one a producer
/// can take first.
@Suite struct StagingNameTests {
    @Test("names a producer made in tmp/ for this process's next staging names do not fail a commit")
    func plantedNamesDoNotFailACommit() throws {
        let spool = try TemporarySpool()
        let target = FileName("r-1@alpha.json")
        // Everything the names are made of is known to a member of the
        // group: the time, the PID (ps), a counter from 1 and the target
        // name (its own record's entry; round-running.json for every round).
        let now = Timestamp.now()
        for second in 0..<3 {
            let time = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch + Int64(second)).compact
            for counter in 1...500 {
                let name = "\(time).\(getpid())_\(counter).\(target)"
                #expect(FileManager.default.createFile(atPath: spool.path + "/tmp/" + name, contents: Data()))
            }
        }
        try spool.session.commit(
            Transition(newFiles: [.init(Array("{}".utf8), as: target, in: .state(.queued), replacing: false)]))
        #expect(FileManager.default.fileExists(atPath: spool.path + "/queued/r-1@alpha.json"))
    }
}
