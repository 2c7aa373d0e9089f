import CourierPosix
import CourierSupport
import Glibc

/// Unique staging names, `TIME.PID_N.NAME` as maildir's (NAME: the first
/// 160 bytes of the target name, so a person can tell what a leftover was
/// for). One sequence belongs to one writer; the PID and the counter keep
/// writers of one process and of different processes apart.
public struct StagingNames: Sendable {
    private var counter = 0

    public init() {}

    public mutating func next(for name: FileName) -> FileName {
        counter += 1
        let prefix = "\(Timestamp.now().compact).\(getpid())_\(counter)."
        return FileName(bytes: Array(prefix.utf8) + name.bytes.prefix(160))
    }

    /// The PID in a staging name made by `next`: `20261130T070000Z.1234_5.rest`.
    public static func writer(of name: FileName) -> pid_t? {
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
        return pid
    }
}
