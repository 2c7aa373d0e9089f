import CourierPosix
import Glibc

/// A spool that users other than courier's may write to: the members of
/// one group (`courier init --group courier-producers`), the way Postfix's
/// maildrop lets local users post. They drop into `tmp/` and `queued/`
/// and see nothing else.
extension Spool {
    /// `tmp/` and `queued/`: the producers' group, rwx for it, setgid (a
    /// file dropped there gets the group, so courier, a member, can read
    /// it whatever the writer's own group) and sticky (a producer may
    /// rename or remove only its own files; courier, the folders' owner,
    /// any). The spool itself gains o+x only (0751): others may pass
    /// through to those two folders, but not list the spool, and every
    /// other folder stays courier's (0750).
    package static let producerFolderMode: mode_t = 0o3770
    package static let producerRootMode: mode_t = 0o751

    package func openIntake(toGroup group: gid_t) throws(SpoolError) {
        do throws(SystemError) {
            try root.setGroup(nil, mode: Self.producerRootMode)
            try tmp.setGroup(group, mode: Self.producerFolderMode)
            try directory(.queued).setGroup(group, mode: Self.producerFolderMode)
        } catch {
            throw SpoolError(error)
        }
    }

    /// Whether the spool's owner belongs to `group`: unless it does, it
    /// cannot read a file a producer left group-readable only.
    package func ownerIsMember(of group: gid_t) throws(SpoolError) -> Bool {
        let owner: uid_t
        do { owner = try root.owner().user } catch { throw SpoolError(error) }
        return Accounts.user(owner, isMemberOf: group)
    }
}
