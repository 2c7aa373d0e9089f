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
}
