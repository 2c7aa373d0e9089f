import CourierPosix
import Glibc

/// A program run in a process group of its own, with its standard input
/// on a file and its standard error on a pipe that courier drains and
/// keeps only the start of (a daemon it leaves behind gets EPIPE, never a
/// file that grows in the spool), that cannot outlive its deadline: at the deadline
/// its whole group gets SIGTERM, and after a grace period SIGKILL. A
/// notifier that ignores SIGTERM, or leaves children behind, therefore
/// cannot hold the round (and the spool lock) past its time.
struct ChildProcess {
    enum Ending: Equatable {
        case exited(Int32)
        case signalled(Int32)
        /// Killed by courier at the deadline.
        case timedOut
    }

    let path: String
    let standardInput: String

    /// How much of standard error is kept for the health note.
    static let errorExcerpt = 200

    /// How long a stopped group has between SIGTERM and SIGKILL.
    static let grace: Duration = .seconds(1)

    func run(deadline timeout: Duration) throws(Errno) -> (ending: Ending, standardError: [UInt8]) {
        var pipeEnds: [Int32] = [0, 0]
        _ = try system { pipe(&pipeEnds) }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let reader = FileDescriptor(owning: pipeEnds[0])
        let writer = FileDescriptor(owning: pipeEnds[1])
        _ = fcntl(reader.rawValue, F_SETFL, O_NONBLOCK)
        var errorBytes: [UInt8] = []
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            // Bounded, so a notifier that writes without end cannot keep
            // courier reading instead of watching the clock.
            for _ in 0..<256 {
                let count = read(reader.rawValue, &buffer, buffer.count)
                guard count > 0 else { return }
                errorBytes += buffer.prefix(max(0, min(count, Self.errorExcerpt - errorBytes.count)))
            }
        }
        let ending = try spawnAndWait(timeout, errorPipe: writer, drain: drain)
        drain()
        return (ending, errorBytes)
    }

    private func spawnAndWait(_ timeout: Duration, errorPipe writer: FileDescriptor, drain: () -> Void)
        throws(Errno) -> Ending
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writer.rawValue, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own group (pgid = its pid), and default signal dispositions.
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(path), nil]
        defer { for argument in arguments { free(argument) } }
        let environment = Self.environment()
        defer { for variable in environment { free(variable) } }
        let spawned = posix_spawn(&pid, path, &actions, &attributes, arguments, environment)
        guard spawned == 0 else { throw Errno(spawned) }
        // Only the child (and what it starts) holds the write end now.
        withExtendedLifetime(writer) {}

        let end = MonotonicInstant.now() + timeout
        while MonotonicInstant.now() < end {
            drain()
            if let ending = try reap(pid, waiting: false) { return ending }
            usleep(5_000)
        }
        kill(-pid, SIGTERM)
        let killAt = MonotonicInstant.now() + Self.grace
        while MonotonicInstant.now() < killAt {
            drain()
            if try reap(pid, waiting: false) != nil {
                // The leader is gone; its children may not be.
                kill(-pid, SIGKILL)
                return .timedOut
            }
            usleep(5_000)
        }
        kill(-pid, SIGKILL)
        _ = try reap(pid, waiting: true)
        return .timedOut
    }

    private func reap(_ pid: pid_t, waiting: Bool) throws(Errno) -> Ending? {
        var status: Int32 = 0
        let result = try system { waitpid(pid, &status, waiting ? 0 : WNOHANG) }
        guard result == pid else { return nil }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, spelled out: Swift has no macros.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    private static func environment() -> [UnsafeMutablePointer<CChar>?] {
        var variables: [UnsafeMutablePointer<CChar>?] = []
        var cursor = environ
        while let variable = cursor.pointee {
            variables.append(strdup(variable))
            cursor += 1
        }
        return variables + [nil]
    }
}
