/// The bash completion script, written from the command table. It needs
/// bash-completion's `_init_completion` and `_filedir`: bash reads the
/// folder the script is installed in only when that package is there.
enum BashCompletion {
    static func script(commands: [Command] = CommandTable.commands, globals: [Option] = CommandTable.globalOptions)
        -> String
    {
        let groups = commands.filter { !$0.subcommands.isEmpty }.map(\.name).joined(separator: " ")
        let names = commands.map(\.name).joined(separator: " ")
        var arms: [String] = []
        for command in commands {
            if command.subcommands.isEmpty {
                arms += arm(command.name, command)
            } else {
                arms += [
                    "        \(command.name))",
                    "        " + #"    [[ -n $ended ]] || _courier_offer ""#
                        + command.subcommands.map(\.name).joined(separator: " ")
                        + "\"",
                    "            ;;",
                ]
                for sub in command.subcommands { arms += arm("\"\(command.name) \(sub.name)\"", sub) }
            }
        }
        return #"""
            # bash completion for courier(1)
            # Written by `courier completions bash` from the command table
            # (Sources/CourierCLI/CommandTable.swift); `make completions` rewrites it.

            _courier_list() {
                # What only courier knows (its configuration's subscribers and
                # catalogs, a spool's entries), asked of courier itself with the
                # line's --config and --spool, so it looks where the command will.
                # A value's leading ~/ is the shell's to expand, as it will
                # when the line runs; the words here are still as typed.
                local -a globals=()
                local i value
                for ((i = 1; i < cword; i++)); do
                    case ${words[i]} in
                        --config | --spool)
                            if [[ ${words[i + 1]} == = ]]; then value=${words[i + 2]}; else value=${words[i + 1]}; fi
                            [[ $value == "~/"* ]] && value=$HOME/${value#"~/"}
                            globals+=("${words[i]}=$value")
                            ;;
                        --config=* | --spool=*)
                            value=${words[i]#*=}
                            [[ $value == "~/"* ]] && value=$HOME/${value#"~/"}
                            globals+=("${words[i]%%=*}=$value")
                            ;;
                    esac
                done
                "${words[0]}" "${globals[@]}" completions --list "$1" -- "$cur" 2>/dev/null
            }

            _courier_offer() {
                # These words, and the global options once an option is begun.
                COMPREPLY=($(compgen -W "$1" -- "$cur"))
                if [[ $cur == -* ]]; then
                    COMPREPLY+=($(compgen -W "\#(words(globals))" -- "$cur"))
                fi
            }

            _courier() {
                local cur prev words cword split
                _init_completion -s || return

                case $prev in
            \#(valueCases(globals, indent: "        ").joined(separator: "\n"))
                esac

                # The command (and subcommand) so far, past the global options and
                # their values; after `--` every word is an operand.
                local command="" ended="" i
                for ((i = 1; i < cword; i++)); do
                    [[ -n $ended ]] && continue
                    case ${words[i]} in
                        --) ended=1 ;;
                        \#(globals.filter(\.takesValue).map(\.name).joined(separator: " | "))) ((i++)) ;;
                        -*) ;;
                        *)
                            if [[ -z $command ]]; then
                                command=${words[i]}
                            elif [[ " \#(groups) " == *" $command "* ]]; then
                                command+=" ${words[i]}"
                            fi
                            ;;
                    esac
                done

                case $command in
                    "")
                        _courier_offer "\#(names)"
                        ;;
            \#(arms.joined(separator: "\n"))
                esac
            }

            complete -F _courier courier
            """#
    }

    /// One command's arm of `case $command in`: its option values, its
    /// options, its operands.
    private static func arm(_ label: String, _ command: Command) -> [String] {
        let indent = "            "
        var lines = ["        \(label))"]
        let values = valueCases(command.options, indent: indent + "    ")
        if !values.isEmpty { lines += [indent + "case $prev in"] + values + [indent + "esac"] }
        let options = words(command.options)
        if command.operands == .nothing {
            lines.append(indent + "[[ -n $ended ]] || _courier_offer \"\(options)\"")
        } else {
            lines += [
                indent + "if [[ -z $ended && $cur == -* ]]; then",
                indent + "    _courier_offer \"\(options)\"",
                indent + "else",
                indent + "    " + complete(command.operands),
                indent + "fi",
            ]
        }
        lines.append(indent + ";;")
        return lines
    }

    /// `--config --spool --quiet -q …`
    private static func words(_ options: [Option]) -> String {
        options.flatMap { [$0.name] + ($0.short.map { [$0] } ?? []) }.joined(separator: " ")
    }

    /// `case $prev in` arms: what completes each option's value, and a bare
    /// `return` for values nothing can complete (a date, a name).
    private static func valueCases(_ options: [Option], indent: String) -> [String] {
        var lines: [String] = []
        let silent = options.filter { $0.takesValue && $0.completion == .nothing }.flatMap {
            [$0.name] + ($0.short.map { [$0] } ?? [])
        }
        if !silent.isEmpty { lines.append(indent + silent.joined(separator: " | ") + ") return ;;") }
        for option in options where option.takesValue && option.completion != .nothing {
            let names = ([option.name] + (option.short.map { [$0] } ?? [])).joined(separator: " | ")
            lines += [
                indent + names + ")", indent + "    " + complete(option.completion), indent + "    return",
                indent + "    ;;",
            ]
        }
        return lines
    }

    /// The shell words that fill COMPREPLY with one kind of completion.
    private static func complete(_ completion: Completion) -> String {
        switch completion {
        case .nothing: return ":"
        case .files: return "_filedir"
        case .directories: return "_filedir -d"
        case .words(let words): return #"COMPREPLY=($(compgen -W ""# + words.joined(separator: " ") + #"" -- "$cur"))"#
        case .listed(let kinds):
            // Not through `compgen -W`, which expands each word it is given
            // (and runs its `$(…)`): courier has matched the prefix already.
            return #"mapfile -t COMPREPLY < <(_courier_list "# + Listed.words(kinds) + ")"
        case .commands: return complete(.words(CommandTable.names))
        }
    }
}
