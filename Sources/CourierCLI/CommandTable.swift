/// Every command, in the order `courier help` lists them. Each command's
/// declaration sits beside its run function in Commands/; help, the
/// parser, the shell completions and the man page test read this list.
enum CommandTable {
    static let commands: [Command] = [
        InitCommand.command,
        EnqueueCommand.command,
        RunCommand.command,
        RunCommand.sendNowCommand,
        StatusCommand.command,
        ListCommand.command,
        WhyCommand.command,
        EtagCommand.command,
        ManualMoveCommand.ackCommand,
        ManualMoveCommand.resendCommand,
        ManualMoveCommand.deleteCommand,
        HoldCommand.command,
        ReleaseCommand.command,
        CopyCommand.command,
        BackfillCommand.command,
        PruneCommand.command,
        LogCommand.command,
        CheckCommand.command,
        CatalogCommand.command,
        SinkCommand.command,
        DemoCommand.command,
        HelpCommand.command,
        VersionCommand.command,
        CompletionsCommand.command,
    ]

    /// Options every command takes, before or after its name.
    static let globalOptions: [Option] = [
        .value("--config", "FILE", "the configuration file, instead of the one searched for", completion: .files),
        .value("--spool", "DIR", "use this spool instead of the configuration's", completion: .directories),
        .flag("--quiet", short: "-q", "log only warnings and errors on standard error"),
        .flag("--verbose", short: "-v", "log every event, and debugging detail"),
        .flag("--help", short: "-h", "show the usage of courier, or of the command"),
        .flag("--version", "print the version"),
    ]

    static func command(named name: String) -> Command? { commands.first { $0.name == name } }

    static func globalOption(named name: String) -> Option? {
        globalOptions.first { $0.name == name || $0.short == name }
    }
}
