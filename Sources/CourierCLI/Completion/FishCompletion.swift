/// The fish completion script, written from the command table: one
/// `complete` line per command, subcommand and option, each under the
/// condition that the command line names that command so far.
enum FishCompletion {
    static func script(commands: [Command] = CommandTable.commands, globals: [Option] = CommandTable.globalOptions)
        -> String
    {
        let groups = commands.filter { !$0.subcommands.isEmpty }.map(\.name).joined(separator: " ")
        let valued = globals.filter(\.takesValue).map(\.name).joined(separator: " ")
        var lines: [String] = []
        for option in globals { lines.append(complete(option, when: nil)) }
        for command in commands {
            lines.append(
                "complete -c courier -n '__courier_using' -a \(command.name) -d \(quote(command.summary))")
            if command.subcommands.isEmpty {
                lines += arm(command, when: command.name)
                continue
            }
            for sub in command.subcommands {
                lines.append(
                    "complete -c courier -n '__courier_using \(command.name)' -a \(sub.name) -d \(quote(sub.summary))")
                lines += arm(sub, when: "\(command.name) \(sub.name)")
            }
        }
        return #"""
            # fish completion for courier(1)
            # Written by `courier completions fish` from the command table
            # (Sources/CourierCLI/CommandTable.swift); `make completions` rewrites it.

            function __courier_command
                # The command (and subcommand) so far, past the global options
                # and their values; after `--` every word is an operand.
                set -l tokens (commandline -opc)
                set -e tokens[1]
                set -l command
                while set -q tokens[1]
                    switch $tokens[1]
                        case --
                            break
                        case \#(valued)
                            set -e tokens[1]
                        case '-*'
                        case '*'
                            if not set -q command[1]
                                set command $tokens[1]
                            else if not set -q command[2]; and contains -- $command[1] \#(groups)
                                set -a command $tokens[1]
                            end
                    end
                    set -e tokens[1]
                end
                string join ' ' -- $command
            end

            function __courier_using
                # True when the line names this command so far (none: no command yet).
                set -l current (__courier_command)
                test "$current" = "$argv"
            end

            function __courier_list
                # What only courier knows (its configuration's subscribers and
                # catalogs, a spool's entries), asked of courier itself with the
                # line's --config and --spool.
                set -l tokens (commandline -opc)
                set -l globals
                for i in (seq 2 (count $tokens))
                    switch $tokens[$i]
                        case --config --spool
                            set -a globals $tokens[$i] $tokens[(math $i + 1)]
                        case '--config=*' '--spool=*'
                            set -a globals $tokens[$i]
                    end
                end
                $tokens[1] $globals completions --list $argv[1] -- (commandline -ct) 2>/dev/null
            end

            complete -c courier -f
            \#(lines.joined(separator: "\n"))
            """#
    }

    /// A command's options and operands, offered while the line names it.
    private static func arm(_ command: Command, when name: String) -> [String] {
        var lines = command.options.map { complete($0, when: name) }
        if command.operands != .nothing {
            lines.append("complete -c courier -n '__courier_using \(name)' " + values(command.operands))
        }
        return lines
    }

    /// `complete -c courier -n '__courier_using list' -l subscriber -x -a '(…)' -d '…'`
    private static func complete(_ option: Option, when name: String?) -> String {
        var words = ["complete -c courier"]
        if let name { words.append("-n '__courier_using \(name)'") }
        words.append("-l " + option.name.dropFirst(2))
        if let short = option.short { words.append("-s " + short.dropFirst()) }
        if option.takesValue { words.append(option.completion == .nothing ? "-x" : values(option.completion)) }
        words.append("-d " + quote(option.help))
        return words.joined(separator: " ")
    }

    /// What completes a value or an operand: `-F` files, `-x -a '…'` words.
    private static func values(_ completion: Completion) -> String {
        switch completion {
        case .nothing: return "-x"
        case .files: return "-r -F"
        case .directories: return "-x -a '(__fish_complete_directories)'"
        case .words(let words): return "-x -a " + quote(words.joined(separator: " "))
        case .listed(let kinds): return "-x -a '(__courier_list \(Listed.words(kinds)))'"
        case .commands: return values(.words(CommandTable.names))
        }
    }

    /// Single quotes, with fish's two escapes inside them.
    private static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
