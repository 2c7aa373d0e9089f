import Foundation
import Glibc
import Testing

@testable import CourierPosix

/// `FileDescriptor.read(upTo:size:)`: every dropped record, configuration
/// and input file is read through it, one read(2) when fstat's size is
/// right, and on to the end of the file when it is not.
@Suite struct FileReadTests {
    private func opened(_ bytes: [UInt8], in folder: TemporaryDirectory) throws -> FileDescriptor {
        let path = folder.path + "/file"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        return FileDescriptor(owning: fd, path: path)
    }

    private func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    @Test("a file read with the size fstat gave comes back whole, byte for byte", arguments: [0, 1, 1_995, 70_000])
    func aFileReadWithItsSizeComesBackWhole(count: Int) throws {
        let folder = TemporaryDirectory("read")
        let bytes = pattern(count)
        #expect(try opened(bytes, in: folder).read(upTo: 1 << 20, size: count) == bytes)
    }

    @Test("a file that grew after its size was taken is read on to its end")
    func aFileThatGrewIsReadToItsEnd() throws {
        let folder = TemporaryDirectory("read")
        let bytes = pattern(10_000)
        // The size said 100: a first read of 101 bytes is full, so it reads on.
        #expect(try opened(bytes, in: folder).read(upTo: 1 << 20, size: 100) == bytes)
    }

    @Test("no size: the file's own size is looked up, and the bytes come back whole")
    func withoutASizeTheBytesComeBackWhole() throws {
        let folder = TemporaryDirectory("read")
        let bytes = pattern(5_000)
        #expect(try opened(bytes, in: folder).read(upTo: 1 << 20) == bytes)
    }

    @Test("a file larger than the limit comes back cut at the limit, so the caller can tell")
    func aLargerFileIsCutAtTheLimit() throws {
        let folder = TemporaryDirectory("read")
        let bytes = pattern(3_000)
        #expect(try opened(bytes, in: folder).read(upTo: 1_001, size: 3_000) == Array(bytes.prefix(1_001)))
        #expect(try opened(bytes, in: folder).read(upTo: 1_001, size: 10) == Array(bytes.prefix(1_001)))
    }

    @Test("a pipe, whose size says nothing, is read across many reads to its end")
    func aPipeIsReadToItsEnd() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let bytes = pattern(40_000)
        let writeEnd = ends[1]
        let writer = Thread {
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    // Small writes with pauses between them, so that the
                    // reader meets short reads before the end.
                    let count = Glibc.write(writeEnd, buffer.baseAddress! + offset, min(3_000, buffer.count - offset))
                    if count <= 0 { break }
                    offset += count
                    usleep(2_000)
                }
            }
            close(writeEnd)
        }
        writer.start()
        #expect(try FileDescriptor(owning: ends[0], path: "pipe").read(upTo: 1 << 20) == bytes)
    }

    @Test("a read that fails names the file in its error")
    func aFailedReadNamesTheFile() throws {
        let folder = TemporaryDirectory("read")
        let path = folder.path + "/only-written"
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        do {
            _ = try FileDescriptor(owning: fd, path: path).read(upTo: 100, size: 0)
            Issue.record("a read of a write-only descriptor succeeded")
        } catch {
            #expect(error.description.contains(path))
            #expect(error.description.contains("read"))
        }
    }
}
