import Foundation
import Testing

@testable import CourierPosix

/// `countNames`: what a round's progress counts `queued/` with, so that a
/// million queued entries are counted without a million names in memory.
@Suite struct DirectoryCountTests {
    @Test("a folder's visible names are counted as a listing sees them: dot names, files and folders alike")
    func countsWhatAListingShows() throws {
        let folder = TemporaryDirectory("count")
        for index in 0..<300 { try folder.write("{}", to: "entry-\(index)@alpha.json") }
        try folder.write("{}", to: ".half-written")
        try FileManager.default.createDirectory(atPath: folder.path + "/a-folder", withIntermediateDirectories: false)
        let handle = try DirectoryHandle.open(path: folder.path)
        #expect(try handle.countNames() == 301)
        #expect(try handle.countNames() == handle.sortedNames().count)
    }

    @Test("an empty folder counts none, and a stream counts only what is left after the names already taken")
    func countsWhatIsLeft() throws {
        let folder = TemporaryDirectory("count")
        let handle = try DirectoryHandle.open(path: folder.path)
        #expect(try handle.countNames() == 0)
        for index in 0..<10 { try folder.write("{}", to: "entry-\(index)") }
        let stream = try handle.entries()
        _ = try stream.next()
        _ = try stream.next()
        #expect(try stream.countRemaining() == 8)
        #expect(try stream.next() == nil)
    }
}
