import CourierIdentifiers
import CourierPosix
import CourierSupport
import Glibc

/// Unique staging names, `TIME.PID_N.NAME` as maildir's (NAME: the first
/// 160 bytes of the target name, so a person can tell what a leftover was
/// for). One sequence belongs to one writer; the PID and the counter keep
/// writers of one process and of different processes apart.
///
/// On a shared spool the name carries the worker too, `TIME.PID_N.WORKER:NAME`,
/// as maildir's carries the host: PIDs are one host's, and couriers on
/// several hosts (in containers, above all) often have the same ones, so the
/// PID alone would let two hosts pick one name (`O_EXCL` then fails a round).
/// A worker id holds no `:`, so the name says whose it is.
///
/// The counter starts at random: tmp/ of a spool opened to producers is
/// theirs to write too, and the time, the PID (`ps`) and the target name
/// are known to them, so names counted from 1 were names a member could
/// make first, and each one made failed courier's `O_EXCL` and its round.
package struct StagingNames: Sendable {
    private var counter: Int
    /// The worker whose names these are, on a shared spool.
    package var worker: WorkerID?

    package init() {
        counter = Int.random(in: 0..<(1 << 32))
    }

    package mutating func next(for name: FileName) -> FileName {
        counter += 1
        var prefix = Array("\(Timestamp.now().compact).\(getpid())_\(counter).".utf8)
        if let worker { prefix += Array(worker.value.utf8) + [UInt8(ascii: ":")] }
        // 255 bytes is the longest name a file system takes; with the
        // longest worker id NAME gives way.
        return FileName(bytes: prefix + name.bytes.prefix(min(160, 255 - prefix.count)))
    }

    /// The PID in a staging name made by `next`, `20261130T070000Z.1234_5.rest`;
    /// with a worker, only in one that worker made (`TIME.PID_N.WORKER:NAME`).
    /// Nil for every other name.
    package static func writer(of name: FileName, worker: WorkerID? = nil) -> pid_t? {
        guard let (pid, rest) = writerAndRest(of: name) else { return nil }
        guard let worker else { return pid }
        let tag = Array(worker.value.utf8) + [UInt8(ascii: ":")]
        return rest.starts(with: tag) ? pid : nil
    }

    /// The PID, and what follows `TIME.PID_N.`.
    private static func writerAndRest(of name: FileName) -> (pid: pid_t, rest: ArraySlice<UInt8>)? {
        let bytes = name.bytes
        guard bytes.count > 18, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z"),
            bytes[16] == UInt8(ascii: "."),
            bytes[0..<8].allSatisfy({ (0x30...0x39).contains($0) }),
            bytes[9..<15].allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        var index = 17
        var pid: Int32 = 0
        while index < bytes.count, (0x30...0x39).contains(bytes[index]), pid < 100_000_000 {
            pid = pid * 10 + Int32(bytes[index] - 0x30)
            index += 1
        }
        guard index > 17, index < bytes.count, bytes[index] == UInt8(ascii: "_"), pid > 0 else { return nil }
        index += 1
        while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: ".") else { return (pid, []) }
        return (pid, bytes[(index + 1)...])
    }
}
