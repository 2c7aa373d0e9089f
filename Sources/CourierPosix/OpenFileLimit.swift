import Glibc

/// The soft limit on open files, raised to the hard one as the process
/// starts. A round keeps the dropped files of up to three intake groups
/// open (each group's data is fsynced through them at its commit), beside
/// its connections and folders: 800 or so, against the 1024 that systemd
/// and most shells give as the soft limit, while the hard limit is far
/// higher. systemd's own advice is that a program needing more raises its
/// soft limit itself.
package enum OpenFileLimit {
    /// Raises it if it can; a limit that cannot be raised is left as it
    /// was (a file courier then cannot open stops the round, and is not
    /// flagged: `Errno.isOwnLimit`).
    package static func raiseToHard() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The soft limit now; nil when it cannot be read or is unlimited.
    package static var current: Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else {
            return nil
        }
        return Int(clamping: limit.rlim_cur)
    }
}
