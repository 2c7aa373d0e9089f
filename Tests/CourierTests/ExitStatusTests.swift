import Glibc
import Testing

@testable import CourierCLI
@testable import CourierPosix
@testable import CourierSpool

/// What a script reads from courier's exit status: a permission problem,
/// a spool that cannot take a record, and bad data are told apart.
@Suite struct ExitStatusTests {
    @Test(
        "a spool fault maps to 75 when temporary, 77 when permission is denied, 74 otherwise",
        arguments: [
            (SpoolError.operation("create", path: "tmp/x", Errno(ENOSPC)), CourierCLI.ExitStatus.temporary),
            (SpoolError.operation("create", path: "tmp/x", Errno(EACCES)), CourierCLI.ExitStatus.noPermission),
            (SpoolError.notASpool(path: "/s", missing: "tmp/", Errno(EPERM)), CourierCLI.ExitStatus.noPermission),
            (SpoolError.notASpool(path: "/s", missing: "/s", Errno(ENOENT)), CourierCLI.ExitStatus.ioError),
            (SpoolError.rename(from: "tmp/x", to: "queued/x", Errno(EXDEV)), CourierCLI.ExitStatus.ioError),
        ])
    func spoolFaults(_ error: SpoolError, _ status: CourierCLI.ExitStatus) {
        #expect(CLIError.spool(error).status == status)
    }

    @Test(
        "enqueue tells a spool that cannot take the record (73) from permission (77), I/O (74) and later (75)",
        arguments: [
            (SpoolError.notASpool(path: "/s", missing: "/s", Errno(ENOENT)), CourierCLI.ExitStatus.cannotCreate),
            (SpoolError.operation("create", path: "tmp/x", Errno(EROFS)), CourierCLI.ExitStatus.cannotCreate),
            (SpoolError.notASpool(path: "/s", missing: "tmp/", Errno(EACCES)), CourierCLI.ExitStatus.noPermission),
            (SpoolError.operation("create", path: "tmp/x", Errno(EACCES)), CourierCLI.ExitStatus.noPermission),
            (SpoolError.operation("write", path: "tmp/x", Errno(EBADF)), CourierCLI.ExitStatus.ioError),
            (SpoolError.operation("write", path: "tmp/x", Errno(EDQUOT)), CourierCLI.ExitStatus.temporary),
        ])
    func enqueueFaults(_ error: SpoolError, _ status: CourierCLI.ExitStatus) {
        #expect(CLIError.enqueue(error).status == status)
        #expect([73, 74, 75, 77].contains(status.rawValue))
    }

    @Test("of several failed files, the spool's fault counts over a missing file, and that over a bad record")
    func theWorstFailureCounts() {
        var failures = EnqueueFailures()
        #expect(failures.status == nil)
        failures.note(.dataError)
        #expect(failures.status == .dataError)
        failures.note(.noInput)
        failures.note(.dataError)
        #expect(failures.status == .noInput)
        failures.note(.noPermission)
        failures.note(.noInput)
        #expect(failures.status == .noPermission)
    }

    @Test("a spool this user may not open says permission denied, not `courier init`")
    func permissionIsNotAMissingSpool() {
        let denied = SpoolError.notASpool(path: "/var/spool/courier", missing: "tmp/", Errno(EACCES))
        #expect(!denied.description.contains("courier init`)"), "\(denied)")
        #expect(denied.description.contains("/var/spool/courier/tmp/: Permission denied"), "\(denied)")
        let root = SpoolError.notASpool(path: "/var/spool/courier", missing: "/var/spool/courier", Errno(EACCES))
        #expect(root.description.hasPrefix("unable to open /var/spool/courier: Permission denied"), "\(root)")
        let missing = SpoolError.notASpool(path: "/nowhere", missing: "/nowhere", Errno(ENOENT))
        #expect(missing.description.contains("(run `courier init`)"), "\(missing)")
    }
}
