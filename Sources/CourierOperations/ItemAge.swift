import CourierPosix
import CourierSpool

/// How old an item is: the time since intake took it. The one function
/// that computes an item's age, so that where its intake time comes from
/// can change in one place (`intakeTime(of:)` reads today's record of it).
public enum ItemAge {
    /// From `intake` to `now`; never negative (a clock set back makes an
    /// item new, not younger than new).
    public static func age(sinceIntake intake: Timestamp, now: Timestamp) -> Duration {
        max(.zero, now - intake)
    }

    /// An item's intake time as the spool keeps it today: the file's
    /// modification time, which intake sets on the entry it makes. A
    /// deferred entry's modification time holds its next attempt instead
    /// (`DeferralStamp`); for it, the inode's change time, when it was
    /// last renamed or stamped, is the latest its intake can have been.
    public static func intakeTime(of status: FileStatus) -> Timestamp {
        DeferralStamp(modified: status.modified) == nil ? status.modified : min(status.changed, status.modified)
    }
}
