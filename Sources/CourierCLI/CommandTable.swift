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
    static let globalOptions: [Option] = GlobalOptions.fields.map(\.option)

    static func command(named name: String) -> Command? { commands.first { $0.name == name } }

    static func globalOption(named name: String) -> Option? {
        globalOptions.first { $0.name == name || $0.short == name }
    }
}

/// The options every command takes, before or after its name. Given twice,
/// the last counts, so an alias with `--config` can still be given another.
struct GlobalOptions: CommandOptions {
    var configPath: String?
    var spoolPath: String?
    var quiet = false
    var verbose = false
    var help = false
    var version = false

    static let fields: [OptionField<GlobalOptions>] = [
        .value(
            "--config", "FILE", "the configuration file, instead of the one searched for", \.configPath,
            completion: .files),
        .value(
            "--spool", "DIR", "use this spool instead of the configuration's", \.spoolPath, completion: .directories),
        .flag("--quiet", short: "-q", "log only warnings and errors on standard error", \.quiet),
        .flag("--verbose", short: "-v", "log every event, and debugging detail", \.verbose),
        .flag("--help", short: "-h", "show the usage of courier, or of the command", \.help),
        .flag("--version", "print the version", \.version),
    ]
}
