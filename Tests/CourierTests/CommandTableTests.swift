import Foundation
import Testing

@testable import CourierCLI

/// The command table is the one declaration help, the parser and the
/// completions read: these check that it is consistent with itself and
/// with the code that runs the commands.
@Suite struct CommandTableTests {
    /// Every command and subcommand, with the words that name it.
    static let paths: [(String, Command)] = CommandTable.commands.flatMap { command in
        command.subcommands.isEmpty
            ? [(command.name, command)] : command.subcommands.map { ("\(command.name) \($0.name)", $0) }
    }

    @Test("every command the issue lists is in the table, each name once")
    func everyCommandIsDeclaredOnce() {
        let names = CommandTable.commands.map(\.name)
        #expect(Set(names).count == names.count)
        for name in [
            "init", "enqueue", "run", "send-now", "status", "list", "why", "ack", "resend", "delete", "log", "check",
            "prune",
            "copy", "backfill", "catalog", "sink", "demo", "help", "version", "completions",
        ] {
            #expect(names.contains(name), "\(name)")
        }
        #expect(CommandTable.command(named: "catalog")?.subcommands.map(\.name) == ["sync", "status"])
    }

    @Test("each entry of the table builds the command it is named for")
    func entriesAreNamedForTheirCommands() {
        for entry in CommandTable.entries {
            #expect(entry.make().name == entry.name, "\(entry.name)")
        }
    }

    @Test("a command's usage names each of its options, and every option its usage names is declared")
    func usageAndOptionsAgree() throws {
        let optionPattern = try Regex(#"--[a-z][a-z-]*"#)
        for (name, command) in Self.paths {
            let inUsage = Set(command.usage.matches(of: optionPattern).map { String(command.usage[$0.range]) })
            #expect(inUsage == Set(command.options.map(\.name)), "courier \(name): usage \(command.usage)")
            for option in command.options {
                #expect(option.name.hasPrefix("--") && !option.help.isEmpty, "courier \(name) \(option.name)")
                if let placeholder = option.placeholder {
                    #expect(command.usage.contains("\(option.name) \(placeholder)"), "courier \(name) \(option.name)")
                }
            }
        }
    }

    @Test("no command option has the name of a global option, so either may stand anywhere")
    func commandOptionsNeverShadowGlobalOnes() {
        let globals = Set(CommandTable.globalOptions.flatMap { [$0.name] + ($0.short.map { [$0] } ?? []) })
        for (name, command) in Self.paths {
            let names = command.options.flatMap { [$0.name] + ($0.short.map { [$0] } ?? []) }
            #expect(globals.isDisjoint(with: names), "courier \(name)")
            #expect(Set(command.options.map(\.name)).count == command.options.count, "courier \(name)")
        }
    }

    @Test("every command has a summary, and an example that parses as that very command")
    func examplesParse() throws {
        for (name, command) in Self.paths {
            #expect(!command.summary.isEmpty && command.prepare != nil, "courier \(name)")
            // From `courier` (a pipe may feed it) to a redirection, which is the shell's.
            var words = command.example.split(separator: " ").map(String.init)
            let start = try #require(words.lastIndex(of: "courier"), "\(command.example)")
            words = Array(words[(start + 1)...].prefix { $0 != ">" && $0 != "|" })
            let parsed = try CommandLineParser().parse(words)
            #expect(parsed.commandName == name, "\(command.example)")
        }
    }

    @Test("courier help fits a terminal and names every command")
    func theOverviewListsEveryCommand() {
        let text = HelpText.overview()
        for line in text.split(separator: "\n") { #expect(line.count <= 90, "\(line)") }
        for (name, command) in Self.paths { #expect(text.contains("  \(name)  ") && text.contains(command.summary)) }
    }

    @Test(
        "prune's help says what failed-retention removes, as courier(1) does, and no longer that failed/ is never touched"
    )
    func pruneHelpNamesFailedRetention() throws {
        let prune = try #require(CommandTable.command(named: "prune"))
        #expect(prune.details.contains("failed-retention"), "\(prune.details)")
        #expect(!prune.details.contains("failed/ or needsAttention/"), "\(prune.details)")
    }
}
