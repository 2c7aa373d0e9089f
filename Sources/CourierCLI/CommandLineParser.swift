/// The words after `courier`, read against the command table: the global
/// options wherever they stand, the command (and its subcommand), the
/// command's declared options and its operands. Options may come before,
/// between or after operands, as `--name VALUE` or `--name=VALUE`; `--`
/// ends the options, so what follows it is an operand even if it starts
/// with `-`.
///
/// Our own loop rather than glibc's `getopt_long`: that keeps its state in
/// globals (`optind`, `optarg`), prints its own messages, and knows nothing
/// of subcommands or of options that are valid anywhere.
struct CommandLineParser {
    struct Result {
        var global = GlobalOptions()
        /// `[]` for none, `[status]`, or `[catalog, sync]`.
        var path: [Command] = []
        /// The command's options and operands, read into its types when it
        /// is prepared (`Command.prepare`).
        var words = Command.Words()

        /// `catalog sync`: the words that name the command.
        var commandName: String { path.map(\.name).joined(separator: " ") }
    }

    let commands: [CommandTable.Entry]
    let globalOptions: [OptionField<GlobalOptions>]

    init(
        commands: [CommandTable.Entry] = CommandTable.entries,
        globalOptions: [OptionField<GlobalOptions>] = GlobalOptions.fields
    ) {
        self.commands = commands
        self.globalOptions = globalOptions
    }

    func parse(_ words: [String]) throws(CLIError) -> Result {
        var result = Result()
        var optionsEnded = false
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if !optionsEnded && word == "--" {
                optionsEnded = true
                continue
            }
            if !optionsEnded && word.hasPrefix("-") && word != "-" {
                var name = word
                var inline: String?
                if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                    name = String(word[..<equals])
                    inline = String(word[word.index(after: equals)...])
                }
                if let option = result.path.last?.option(named: name) {
                    result.words.options.append(
                        GivenOption(
                            name: option.name, value: try value(of: option, given: name, inline: inline, words, &index))
                    )
                } else if let field = globalOptions.first(where: { $0.option.name == name || $0.option.short == name })
                {
                    // Read at once: the last one given counts.
                    try field.apply(
                        &result.global, try value(of: field.option, given: name, inline: inline, words, &index))
                } else {
                    let command = result.path.isEmpty ? "" : " for courier \(result.commandName)"
                    let known = (result.path.last?.options ?? []) + globalOptions.map(\.option)
                    throw .usage(
                        "unknown option \(name)\(command)"
                            + Suggestion.hint(
                                for: name, among: known.flatMap { [$0.name] + ($0.short.map { [$0] } ?? []) }))
                }
                continue
            }
            if result.path.isEmpty {
                guard let command = commands.first(where: { $0.name == word })?.make() else {
                    throw .usage("unknown command \(word)" + Suggestion.hint(for: word, among: commands.map(\.name)))
                }
                result.path = [command]
            } else if let group = result.path.last, !group.subcommands.isEmpty {
                guard let command = group.subcommand(named: word) else {
                    let guess = Suggestion.closest(to: word, among: group.subcommands.map(\.name))
                    throw .usage(
                        "unknown command \(group.name) \(word) (\(guess.map { "did you mean `\($0)`?" } ?? Self.choices(group)))"
                    )
                }
                result.path.append(command)
            } else {
                result.words.operands.append(word)
            }
        }
        if let group = result.path.last, !group.subcommands.isEmpty, !result.global.help, !result.global.version {
            throw .usage("\(result.commandName) needs a command: \(Self.choices(group))")
        }
        return result
    }

    /// An option's value: after `=` in the same word, else the next word,
    /// whatever it looks like (as getopt does: `--since -1` is a value).
    private func value(of option: Option, given name: String, inline: String?, _ words: [String], _ index: inout Int)
        throws(CLIError) -> String
    {
        guard option.takesValue else {
            if inline != nil { throw .usage("\(name) takes no value") }
            return ""
        }
        if let inline { return inline }
        guard index < words.count else { throw .usage("\(name) needs a value") }
        index += 1
        return words[index - 1]
    }

    private static func choices(_ group: Command) -> String {
        group.subcommands.map(\.name).joined(separator: " or ")
    }
}
