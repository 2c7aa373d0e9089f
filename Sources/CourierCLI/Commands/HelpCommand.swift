/// `courier help [COMMAND [SUBCOMMAND]]`: the overview, or one command's
/// usage, options and example; the text comes from the command table.
enum HelpCommand {
    static let command = Command(
        "help", summary: "list the commands, or show one command's usage and options",
        usage: "[COMMAND [SUBCOMMAND]]", operands: .commands, example: "courier help catalog sync",
        run: { operands, invocation throws(CLIError) in invocation.output.line(try text(for: operands.words)) })

    /// The help for the command these words name; an unknown one is a
    /// usage error, as it would be on the command line.
    static func text(for words: [String]) throws(CLIError) -> String {
        var path: [Command] = []
        for word in words {
            if let group = path.last {
                guard let sub = group.subcommand(named: word) else {
                    throw .usage(
                        "no command \((path.map(\.name) + [word]).joined(separator: " "))"
                            + Suggestion.hint(for: word, among: group.subcommands.map(\.name)))
                }
                path.append(sub)
            } else {
                guard let command = CommandTable.command(named: word) else {
                    throw .usage(
                        "no command \(word)" + Suggestion.hint(for: word, among: CommandTable.names))
                }
                path.append(command)
            }
        }
        return HelpText.command(path)
    }

    /// `courier` alone: the overview on standard error, then exit 64: a
    /// usage error, as a command line that names no command is (`courier
    /// help` prints the same on standard output, and exits 0).
    static func printUsage(_ output: Output) {
        output.errorText(HelpText.overview())
    }
}
