import Glibc

/// The process's table of open file descriptors. The kernel grows it by
/// doubling as higher descriptors are opened, and once the process has a
/// second thread each growth waits for an RCU grace period: 8–16 ms on
/// these machines, three times in a round that opens 2,000 dropped files
/// after its commit thread started (docs/performance.md). Grown once while
/// the process has one thread, it costs nothing of the kind later; the
/// table never shrinks.
package enum DescriptorTable {
    /// Makes room for descriptors below `count` (within the open-file
    /// limit) by opening one near the top and closing it. Best effort: a
    /// table that cannot grow now grows later, as it would have.
    package static func reserve(_ count: Int) {
        let limit = OpenFileLimit.current ?? count
        let highest = min(count, limit) - 1
        guard highest > 2 else { return }
        // Any open descriptor will do; a service may have closed some of
        // the standard three.
        for open in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            let descriptor = fcntl(open, F_DUPFD_CLOEXEC, Int32(clamping: highest))
            if descriptor >= 0 {
                close(descriptor)
                return
            }
        }
    }

    /// The table's size as the kernel reports it (`FDSize` in
    /// /proc/self/status); nil where that cannot be read.
    package static var size: Int? {
        guard let status = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(status) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), status) != nil {
            let text = String(cString: line)
            guard text.hasPrefix("FDSize:") else { continue }
            return Int(
                text.dropFirst("FDSize:".count).trimmingPrefix(while: { $0 == " " || $0 == "\t" }).prefix(
                    while: \.isNumber))
        }
        return nil
    }
}
