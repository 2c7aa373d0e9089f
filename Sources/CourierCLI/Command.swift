import CourierSpool

/// One command as the table declares it: everything `courier help`, the
/// shell completions, the man page check and the parser know of it comes
/// from here, so they cannot disagree.
struct Command: Sendable {
    /// Reads the options and operands the parser found into the command's
    /// own types, or throws the usage error; what it returns runs the
    /// command. Nothing runs until every option has been read.
    typealias Prepare = @Sendable (Words) throws(CLIError) -> Run
    typealias Run = @Sendable (Invocation) throws(CLIError) -> Void

    /// What the parser found for a command: its options in command-line
    /// order, and its operands.
    struct Words: Sendable, Equatable {
        var options: [GivenOption] = []
        var operands: [String] = []
    }

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
    let prepare: Prepare?

    /// A command with options: `fields` declares each (and fills
    /// `Options`), and `run` takes them, and the operands, read into their
    /// types.
    init<Options: CommandOptions, Positional: CommandOperands>(
        _ name: String, summary: String, usage: String = "", details: String = "",
        options fields: [OptionField<Options>],
        operands: Completion = .nothing, example: String,
        run: @escaping @Sendable (Options, Positional, Invocation) throws(CLIError) -> Void
    ) {
        self.init(
            name, summary: summary, usage: usage, details: details, options: fields.map(\.option), operands: operands,
            example: example
        ) { words throws(CLIError) in
            let options = try Options.read(words.options, by: fields)
            let operands = try Positional.read(words.operands, usage: "\(name) \(usage)")
            return { invocation throws(CLIError) in try run(options, operands, invocation) }
        }
    }

    /// A command without options.
    init(
        _ name: String, summary: String, usage: String = "", details: String = "", operands: Completion = .nothing,
        example: String, run: @escaping @Sendable (Operands, Invocation) throws(CLIError) -> Void
    ) {
        self.init(
            name, summary: summary, usage: usage, details: details, options: [OptionField<NoOptions>](),
            operands: operands, example: example
        ) { _, operands, invocation throws(CLIError) in try run(operands, invocation) }
    }

    private init(
        _ name: String, summary: String, usage: String, details: String, options: [Option], operands: Completion,
        example: String, prepare: @escaping Prepare
    ) {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.details = details
        self.options = options
        self.operands = operands
        self.example = example
        self.subcommands = []
        self.prepare = prepare
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
        self.prepare = nil
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

    /// `--json` with what it prints, and its journalctl spelling beside
    /// it: `-o json`, `--output=json`.
    static func json(_ help: String) -> [Option] {
        [
            .flag("--json", help),
            .value(
                "--output", short: "-o", "FORMAT", "text (the default) or json, as journalctl spells it",
                completion: .words(OutputFormat.allCases.map(\.rawValue))),
        ]
    }

    /// What a command with `Option.json` shows in its usage.
    static let jsonUsage = "[--json|--output FORMAT]"

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
    /// Words courier finds itself (`courier completions --list`), with the
    /// line's `--config` and `--spool`: its subscribers, its catalogs, the
    /// entries of a spool's state folders.
    case listed([Listed])
    /// The commands of the table (`courier help COMMAND`).
    case commands

    /// The names in these state folders of the spool.
    static func entries(_ states: [SpoolState]) -> Completion { .listed(states.map(Listed.entries)) }

    /// The configuration's subscribers.
    static let subscribers = Completion.listed([.subscribers])
}

/// One kind of word `courier completions --list` prints.
enum Listed: Sendable, Equatable {
    case subscribers
    case catalogs
    case entries(SpoolState)

    /// How `--list` names it: `subscribers`, `catalogs`, a state.
    var word: String {
        switch self {
        case .subscribers: return "subscribers"
        case .catalogs: return "catalogs"
        case .entries(let state): return state.rawValue
        }
    }

    init?(word: String) {
        switch word {
        case "subscribers": self = .subscribers
        case "catalogs": self = .catalogs
        default:
            guard let state = SpoolState(rawValue: word) else { return nil }
            self = .entries(state)
        }
    }

    /// `subscribers,catalogs`: what the completion scripts pass.
    static func words(_ kinds: [Listed]) -> String { kinds.map(\.word).joined(separator: ",") }

    /// `subscribers,catalogs` read back; nil when a word is none of them.
    @Sendable static func kinds(_ text: String) -> [Listed]? {
        var kinds: [Listed] = []
        for word in text.split(separator: ",") {
            guard let kind = Listed(word: String(word)) else { return nil }
            kinds.append(kind)
        }
        return kinds
    }
}

/// What `--output` (`-o`) takes: journalctl's word for the form.
enum OutputFormat: String, CaseIterable, Sendable {
    case text, json
}
