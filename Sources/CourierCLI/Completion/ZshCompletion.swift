import Foundation

/// The zsh completion script, written from the command table.
enum ZshCompletion {
    static func script(commands: [Command] = CommandTable.commands, globals: [Option] = CommandTable.globalOptions)
        -> String
    {
        var arms: [String] = []
        for command in commands {
            if command.subcommands.isEmpty {
                arms += arm(command.name, command, indent: "                ")
                continue
            }
            arms += [
                "                \(command.name))",
                "                    if (( CURRENT == 2 )); then",
                "                        local -a subcommands",
                "                        subcommands=(",
            ]
            arms += command.subcommands.map { "                            " + described($0) }
            arms += [
                "                        )",
                "                        _describe -t commands '\(command.name) command' subcommands && ret=0",
                "                    else",
                "                        shift words",
                "                        (( CURRENT-- ))",
                "                        curcontext=${curcontext%:*:*}:courier-\(command.name)-$words[1]:",
                "                        case $words[1] in",
            ]
            for sub in command.subcommands { arms += arm(sub.name, sub, indent: "                            ") }
            arms += ["                        esac", "                    fi", "                    ;;"]
        }
        return #"""
            #compdef courier
            # zsh completion for courier(1)
            # Written by `courier completions zsh` from the command table
            # (Sources/CourierCLI/CommandTable.swift); `make completions` rewrites it.

            _courier_list() {
                # What only courier knows (its configuration's subscribers and
                # catalogs, a spool's entries), asked of courier itself with the
                # line's --config and --spool.
                # Those before the command are in courier_globals: the command's
                # own _arguments has replaced opt_args since. _arguments puts its
                # compadd options before the kind of words, which comes last.
                local kind=${@[-1]}
                local -a globals names
                local config=${opt_args[--config]:-${courier_globals[--config]}}
                local spool=${opt_args[--spool]:-${courier_globals[--spool]}}
                [[ -n $config ]] && globals+=(--config $config)
                [[ -n $spool ]] && globals+=(--spool $spool)
                names=(${(f)"$(${service:-courier} $globals completions --list $kind -- $PREFIX 2>/dev/null)"})
                compadd "${@[1,-2]}" -a names
            }

            _courier() {
                local curcontext=$curcontext state state_descr line ret=1
                local -A opt_args
                local -a globals
                globals=(
            \#(globals.flatMap(specs).map { "        " + $0 }.joined(separator: "\n"))
                )

                _arguments -C $globals \
                    '1:command:->command' \
                    '*::argument:->argument' && ret=0
                local -A courier_globals
                courier_globals=("${(@kv)opt_args}")

                case $state in
                    command)
                        local -a commands
                        commands=(
            \#(commands.map { "                " + described($0) }.joined(separator: "\n"))
                        )
                        _describe -t commands 'courier command' commands && ret=0
                        ;;
                    argument)
                        curcontext=${curcontext%:*:*}:courier-$words[1]:
                        case $words[1] in
            \#(arms.joined(separator: "\n"))
                        esac
                        ;;
                esac
                return ret
            }

            _courier "$@"
            """#
    }

    /// One command's arm: `_arguments` with the global options, its own and
    /// its operands.
    private static func arm(_ label: String, _ command: Command, indent: String) -> [String] {
        var specs = command.options.flatMap(specs)
        if let operand = operandSpec(command.operands) { specs.append(operand) }
        let line = (["_arguments $globals"] + specs).joined(separator: " \\\n" + indent + "        ")
        return [indent + label + ")", indent + "    " + line + " && ret=0", indent + "    ;;"]
    }

    /// `'--since=[from this day or time]:date: '`; a short form gets its own.
    private static func specs(_ option: Option) -> [String] {
        let help = "[" + escape(option.help) + "]"
        let value =
            option.placeholder.map { ":" + message($0) + ":" + action(option.completion) } ?? ""
        let names = [option.name] + (option.short.map { [$0] } ?? [])
        return names.map { name in
            "'" + name + (option.takesValue && name.hasPrefix("--") ? "=" : "") + help + value + "'"
        }
    }

    private static func operandSpec(_ completion: Completion) -> String? {
        completion == .nothing ? nil : "'*:argument:" + action(completion) + "'"
    }

    /// The `_arguments` action for one kind of completion.
    private static func action(_ completion: Completion) -> String {
        switch completion {
        case .nothing: return " "
        case .files: return "_files"
        case .directories: return "_files -/"
        case .words(let words): return "(" + words.joined(separator: " ") + ")"
        case .listed(let kinds): return "_courier_list " + Listed.words(kinds)
        case .commands: return action(.words(CommandTable.names))
        }
    }

    /// The message shown for a value: `host\:port` (a colon would end it).
    private static func message(_ placeholder: String) -> String {
        placeholder.lowercased().replacingOccurrences(of: ":", with: #"\:"#)
    }

    /// `'name:summary'` for `_describe`.
    private static func described(_ command: Command) -> String {
        "'" + command.name + ":" + command.summary.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Help text inside `'…[…]'`: quotes closed and reopened, brackets escaped.
    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "'", with: #"'\''"#).replacingOccurrences(of: "[", with: #"\["#)
            .replacingOccurrences(of: "]", with: #"\]"#)
    }
}
