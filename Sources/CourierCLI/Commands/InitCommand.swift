import CourierOperations
import CourierPosix
import CourierSpool
import Glibc

/// `courier init [--group NAME]`: create the spool (mode 0750) and check it;
/// with a group, open its intake folders to that group's members.
enum InitCommand {
    static let command = Command(
        "init", summary: "create the spool (mode 0750) and check it", usage: "[--group NAME]",
        details: """
            Safe to repeat. --group NAME lets the members of group NAME drop records (tmp/ then
            queued/, or courier enqueue): tmp/ and queued/ become NAME's, mode 3770 (setgid,
            sticky), and the spool 0751; every other folder stays closed to them. The spool's
            owner must be a member too, to read what they drop.
            """,
        options: Options.fields,
        example: "courier --spool /var/spool/courier init --group courier-producers",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var group: String?

        static let fields: [OptionField<Options>] = [
            .value("--group", "NAME", "the producers' group, which may write tmp/ and queued/", \.group)
        ]
    }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        let groupName = options.group
        try operands.none(for: "init")
        var group: gid_t?
        if let groupName {
            guard let id = Accounts.group(named: groupName) else {
                throw .usage("init --group \(groupName): no such group (addgroup --system \(groupName) makes it)")
            }
            group = id
        }
        let path = try invocation.spoolLocation()
        let spool: Spool
        do { spool = try Spool.create(at: path) } catch { throw .spool(error) }
        invocation.output.line("spool ready at \(path)")
        if let group, let groupName {
            do throws(SpoolError) {
                try spool.openIntake(toGroup: group)
                invocation.output.line("tmp/ and queued/ open to group \(groupName): its members may drop records")
                if try !spool.ownerIsMember(of: group) {
                    invocation.output.error(
                        "warning: the spool's owner is not in group \(groupName): it cannot read the records its"
                            + " members drop (adduser OWNER \(groupName))")
                }
            } catch {
                throw .spool(error)
            }
        }
        let findings = SpoolCheck(spool: spool).run()
        for finding in findings { invocation.output.error(finding.description) }
        if findings.contains(where: { $0.severity == .fault }) { throw .reported(.ioError) }
    }
}
