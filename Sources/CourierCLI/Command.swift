import CourierSpool

/// One command as the table declares it: everything `courier help`, the
/// shell completions, the man page check and the parser know of it comes
/// from here, so they cannot disagree.
struct Command: Sendable {
    typealias Run = @Sendable (inout Arguments, Invocation) throws(CLIError) -> Void

    let name: String
    /// One line, for `courier help` and the zsh completion's descriptions.
    let summary: String
    /// What follows `courier NAME` (empty for none); every option appears in it.
    let usage: String
    /// More than the summary says, for `courier help NAME`; empty for nothing.
    let details: String
    let options: [Option]
    /// What a shell offers for the positional arguments.
    let operands: Completion
    let example: String
    /// `catalog sync`, `catalog status`: the command is a group and runs
    /// nothing itself.
    let subcommands: [Command]
    let run: Run?

    init(
        _ name: String, summary: String, usage: String = "", details: String = "", options: [Option] = [],
        operands: Completion = .nothing, example: String, run: @escaping Run
    ) {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.details = details
        self.options = options
        self.operands = operands
        self.example = example
        self.subcommands = []
        self.run = run
    }

    /// A group of subcommands, such as `catalog`.
    init(_ name: String, summary: String, details: String = "", subcommands: [Command]) {
        self.name = name
        self.summary = summary
        self.usage = "COMMAND"
        self.details = details
        self.options = []
        self.operands = .nothing
        self.example = subcommands.first?.example ?? ""
        self.subcommands = subcommands
        self.run = nil
    }

    func subcommand(named name: String) -> Command? { subcommands.first { $0.name == name } }

    func option(named name: String) -> Option? { options.first { $0.name == name || $0.short == name } }
}

/// An option: a flag, or one that takes a value (`--since DATE` or
/// `--since=DATE`).
struct Option: Sendable, Equatable {
    let name: String
    /// `-q` for `--quiet`, `-n` for log's `--lines`: only where a familiar
    /// tool (journalctl, tail) taught people the short form.
    let short: String?
    /// `DATE`, `FILE`…; nil for a flag.
    let placeholder: String?
    let help: String
    /// What a shell offers for the value.
    let completion: Completion

    static func flag(_ name: String, short: String? = nil, _ help: String) -> Option {
        Option(name: name, short: short, placeholder: nil, help: help, completion: .nothing)
    }

    static func value(
        _ name: String, short: String? = nil, _ placeholder: String, _ help: String, completion: Completion = .nothing
    ) -> Option {
        Option(name: name, short: short, placeholder: placeholder, help: help, completion: completion)
    }

    var takesValue: Bool { placeholder != nil }

    /// `--since DATE`, `--quiet, -q`: how help shows it.
    var label: String {
        (short.map { "\($0), " } ?? "") + name + (placeholder.map { " \($0)" } ?? "")
    }
}

/// What a shell completes a value or an operand to.
enum Completion: Sendable, Equatable {
    case nothing
    case files
    case directories
    case words([String])
    /// The names in these state folders of the spool.
    case entries([SpoolState])
    /// The commands of the table (`courier help COMMAND`).
    case commands
}
