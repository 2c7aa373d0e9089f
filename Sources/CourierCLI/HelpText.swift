/// `courier help` and `courier help COMMAND`, written from the command
/// table: the same commands and words as docs/design.md §6 and courier(1).
enum HelpText {
    static let synopsis = "courier [--config FILE] [--spool DIR] [--quiet|--verbose] COMMAND [ARGS]"

    /// The whole summary: every command with its one line, the global
    /// options, and what every command shares.
    static func overview(_ commands: [Command] = CommandTable.commands) -> String {
        var rows: [(String, String)] = []
        for command in commands {
            if command.subcommands.isEmpty {
                rows.append((command.name, command.summary))
            } else {
                for sub in command.subcommands { rows.append(("\(command.name) \(sub.name)", sub.summary)) }
            }
        }
        return """
            usage: \(synopsis)
                   courier help [COMMAND], or courier COMMAND --help: its options and an example

            Courier delivers JSON records dropped into a spool directory to HTTP
            subscribers, once per Idempotency-Key, through the state folders
            queued/ awaitingRoute/ sending/ sent/ failed/ needsAttention/.

            commands:
            \(columns(rows))

            global options, before or after the command (`--` ends the options):
            \(columns(CommandTable.globalOptions.map { ($0.label, $0.help) }))

            Events are logged on standard error, one line each (with <N> priorities when it is
            the journal): --quiet shows warnings and errors only, --verbose everything.
            ENTRY is a file name (KEY@SUB.json), KEY@SUB, or a KEY (all its subscribers).
            The configuration is the first found of --config FILE, $COURIER_CONFIG,
            ./etc/courier.conf and /etc/courier/courier.conf.
            Exit status (sysexits.h): 0 ok (a round that ran, whatever its items' fates),
            64 usage, 65 bad data, 66 no input file, 73 cannot create, 74 I/O, 75 temporary,
            77 permission denied, 78 configuration.
            """
    }

    /// One command's usage, what it does, its options and an example; for
    /// a group, its subcommands.
    static func command(_ path: [Command]) -> String {
        guard let command = path.last else { return overview() }
        let name = path.map(\.name).joined(separator: " ")
        if !command.subcommands.isEmpty {
            let usages = command.subcommands.map { usageLine(name + " " + $0.name, $0) }
            return """
                usage: \(usages.joined(separator: "\n       "))

                \(command.summary)\(command.details.isEmpty ? "" : "\n" + command.details)

                commands:
                \(columns(command.subcommands.map { ($0.name, $0.summary) }))

                `courier \(name) COMMAND --help` shows one of them.
                """
        }
        var text = "usage: \(usageLine(name, command))\n\n\(command.summary)\n"
        if !command.details.isEmpty { text += command.details + "\n" }
        if !command.options.isEmpty {
            text += "\noptions:\n" + columns(command.options.map { ($0.label, $0.help) }) + "\n"
        }
        text += "\nexample:\n  \(command.example)\n"
        text += "\nGlobal options (--config FILE, --spool DIR, --quiet, --verbose) go before or after the\n"
        text += "command; `--` ends the options. `courier help` lists every command."
        return text
    }

    static func usageLine(_ name: String, _ command: Command) -> String {
        "courier \(name)" + (command.usage.isEmpty ? "" : " \(command.usage)")
    }

    /// Two columns, the second aligned, indented by two spaces.
    static func columns(_ rows: [(String, String)]) -> String {
        let width = (rows.map(\.0.count).max() ?? 0) + 2
        return rows.map { left, right in
            "  " + left + String(repeating: " ", count: width - left.count) + right
        }.joined(separator: "\n")
    }
}
