import Glibc

/// Who may do what in a directory: its group and permission bits, and the
/// accounts behind them. For `courier init --group`, which opens a spool's
/// intake folders to a group of producers.
extension DirectoryHandle {
    /// The directory's owner and group.
    package func owner() throws(SystemError) -> (user: uid_t, group: gid_t) {
        var info = stat()
        try system("look at", displayPath) { fstat(descriptor.rawValue, &info) }
        return (info.st_uid, info.st_gid)
    }

    /// Gives the directory to `group` (its owner stays) and sets all of
    /// its permission bits, setgid and sticky included, whatever the umask.
    package func setGroup(_ group: gid_t?, mode: mode_t) throws(SystemError) {
        if let group {
            // uid_t(bitPattern: -1): leave the owner as it is (chown(2)).
            try system("change the group of", displayPath) { fchown(descriptor.rawValue, UInt32.max, group) }
        }
        try system("change the mode of", displayPath) { fchmod(descriptor.rawValue, mode) }
    }

    /// Gives the directory to `owner` (root only).
    package func setOwner(_ owner: (user: uid_t, group: gid_t)) throws(SystemError) {
        try system("change the owner of", displayPath) { fchown(descriptor.rawValue, owner.user, owner.group) }
    }
}

extension FileDescriptor {
    /// Sets the file's permission bits exactly, whatever the umask.
    package func setMode(_ mode: mode_t) throws(SystemError) {
        try system("change the mode of", path) { fchmod(rawValue, mode) }
    }

    /// Gives the open file to `owner` (root only: fchown, no name looked up).
    package func setOwner(_ owner: (user: uid_t, group: gid_t)) throws(SystemError) {
        try system("change the owner of", path) { fchown(rawValue, owner.user, owner.group) }
    }
}

/// The user and group database (getpwuid_r, getgrnam_r, getgrouplist).
package enum Accounts {
    /// The id of the group called `name`; nil when there is none.
    package static func group(named name: String) -> gid_t? {
        var entry = Glibc.group()
        var found: UnsafeMutablePointer<Glibc.group>?
        // The entry's strings live in the buffer: only the id is kept.
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let status = buffer.withUnsafeMutableBufferPointer { space in
            guard let base = space.baseAddress else { return ERANGE }
            return getgrnam_r(name, &entry, base, space.count, &found)
        }
        guard status == 0, found != nil else { return nil }
        return entry.gr_gid
    }

    /// The name of user `id`; nil when it has none.
    package static func userName(_ id: uid_t) -> String? {
        account(id).map(\.name)
    }

    /// Whether user `id` belongs to group `group`, as its primary group or
    /// as one of its others (what a process of that user gets at login).
    package static func user(_ id: uid_t, isMemberOf group: gid_t) -> Bool {
        guard let (name, primary) = account(id) else { return false }
        if primary == group { return true }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        while getgrouplist(name, primary, &groups, &count) == -1 {
            groups = [gid_t](repeating: 0, count: Int(count) + 64)
            count = Int32(groups.count)
        }
        return groups.prefix(Int(count)).contains(group)
    }

    private static func account(_ id: uid_t) -> (name: String, group: gid_t)? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        // The name is copied out while the buffer it lives in is there.
        return buffer.withUnsafeMutableBufferPointer { space -> (name: String, group: gid_t)? in
            guard let base = space.baseAddress, getpwuid_r(id, &entry, base, space.count, &found) == 0,
                found != nil, let name = entry.pw_name
            else { return nil }
            return (String(cString: name), entry.pw_gid)
        }
    }
}
