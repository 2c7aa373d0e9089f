/// Every command, in the order `courier help` lists them. Each command's
/// declaration sits beside its run function in Commands/; help, the
/// parser, the shell completions and the man page test read this list.
///
/// A command is built only when asked for: building one builds its
/// options' key paths, whose generic metadata the runtime instantiates by
/// mangled name, and building all of them was two thirds of the time
/// `courier version` took before `main` had anything to do. A process runs
/// one command, so it builds one (`CommandTableTests` checks each name).
enum CommandTable {
    struct Entry: Sendable {
        let name: String
        let make: @Sendable () -> Command

        init(_ name: String, _ make: @escaping @Sendable () -> Command) {
            self.name = name
            self.make = make
        }
    }

    static let entries: [Entry] = [
        Entry("init") { InitCommand.command },
        Entry("enqueue") { EnqueueCommand.command },
        Entry("run") { RunCommand.command },
        Entry("send-now") { RunCommand.sendNowCommand },
        Entry("status") { StatusCommand.command },
        Entry("list") { ListCommand.command },
        Entry("why") { WhyCommand.command },
        Entry("etag") { EtagCommand.command },
        Entry("ack") { ManualMoveCommand.ackCommand },
        Entry("resend") { ManualMoveCommand.resendCommand },
        Entry("delete") { ManualMoveCommand.deleteCommand },
        Entry("hold") { HoldCommand.command },
        Entry("release") { ReleaseCommand.command },
        Entry("copy") { CopyCommand.command },
        Entry("backfill") { BackfillCommand.command },
        Entry("prune") { PruneCommand.command },
        Entry("log") { LogCommand.command },
        Entry("check") { CheckCommand.command },
        Entry("catalog") { CatalogCommand.command },
        Entry("sink") { SinkCommand.command },
        Entry("demo") { DemoCommand.command },
        Entry("help") { HelpCommand.command },
        Entry("version") { VersionCommand.command },
        Entry("completions") { CompletionsCommand.command },
    ]

    static var names: [String] { entries.map(\.name) }

    /// Every command, built: for help, the completions and the tests.
    static var commands: [Command] { entries.map { $0.make() } }

    static func command(named name: String) -> Command? { entries.first { $0.name == name }?.make() }

    /// Options every command takes, before or after its name.
    static let globalOptions: [Option] = GlobalOptions.fields.map(\.option)

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
