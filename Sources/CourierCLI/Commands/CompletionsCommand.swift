/// `courier completions bash|zsh`: the shell completion script, written
/// from the command table. etc/completion/ holds this output, checked in;
/// a test fails when it differs, and `make completions` rewrites it.
enum CompletionsCommand {
    static let command = Command(
        "completions", summary: "print the bash or zsh completion script",
        usage: "bash|zsh", operands: .words(["bash", "zsh"]),
        example: "courier completions bash > ~/.local/share/bash-completion/completions/courier",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        let shells = try arguments.positionals()
        guard shells.count == 1, let shell = shells.first else { throw .usage("completions bash|zsh") }
        switch shell {
        case "bash": invocation.output.line(BashCompletion.script())
        case "zsh": invocation.output.line(ZshCompletion.script())
        default: throw .usage("completions bash|zsh: no completion for \(shell)")
        }
    }
}
