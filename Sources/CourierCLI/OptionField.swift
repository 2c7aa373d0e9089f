/// The options of one command as one value: each command declares a
/// struct of them and the fields that fill it, and its run function takes
/// that struct. An option the command did not declare is no property of
/// its struct, so asking for it does not compile.
protocol CommandOptions: Sendable {
    /// Every option absent: flags off, values nil or their default.
    init()
}

/// A command without options.
struct NoOptions: CommandOptions {}

/// One option as the command table declares it (`Option`: name, help,
/// completion) with where its value goes in the command's `Options` and
/// how the word is read into its type. The declaration is the storage:
/// help, completion, the parser and the command all come from it.
struct OptionField<Options: CommandOptions>: Sendable {
    let option: Option
    /// Reads the word (empty for a flag) into `options`, or throws the
    /// usage error that names the option.
    let apply: @Sendable (inout Options, String) throws(CLIError) -> Void

    typealias Target<Value> = WritableKeyPath<Options, Value> & Sendable

    static func flag(_ name: String, short: String? = nil, _ help: String, _ target: Target<Bool>) -> OptionField {
        OptionField(option: .flag(name, short: short, help)) { options, _ in options[keyPath: target] = true }
    }

    /// `--name WORD`, read by the value's own type.
    static func value<Value: OptionValue>(
        _ name: String, short: String? = nil, _ placeholder: String, _ help: String, _ target: Target<Value?>,
        completion: Completion = .nothing
    ) -> OptionField {
        value(
            name, short: short, placeholder, help, target, completion: completion, expected: Value.expected,
            read: Value.init(optionText:))
    }

    /// `--name WORD`, read by `read`; `expected` is what the usage error
    /// says the word should have been.
    static func value<Value: Sendable>(
        _ name: String, short: String? = nil, _ placeholder: String, _ help: String, _ target: Target<Value?>,
        completion: Completion = .nothing, expected: String, read: @escaping @Sendable (String) -> Value?
    ) -> OptionField {
        OptionField(option: .value(name, short: short, placeholder, help, completion: completion)) {
            options, text throws(CLIError) in
            guard let value = read(text) else { throw .usage("\(name) \(text): \(expected)") }
            options[keyPath: target] = value
        }
    }

    /// `--json` and `--output FORMAT` (`-o json`, journalctl's spelling),
    /// both into one `OutputForm`.
    static func json(_ help: String, _ target: Target<OutputForm>) -> [OptionField] {
        let options = Option.json(help)
        return [
            OptionField(option: options[0]) { options, _ throws(CLIError) in try options[keyPath: target].sayJSON() },
            OptionField(option: options[1]) { options, text throws(CLIError) in
                try options[keyPath: target].say(text)
            },
        ]
    }
}

extension CommandOptions {
    /// The options given, in command-line order, read into their types. A
    /// value option given twice is refused: which one was meant is a guess
    /// (`--subscriber a --subscriber b`); a flag twice is the flag.
    static func read(_ given: [GivenOption], by fields: [OptionField<Self>]) throws(CLIError) -> Self {
        var options = Self()
        for field in fields where field.option.takesValue {
            let count = given.filter { $0.name == field.option.name }.count
            if count > 1 { throw .usage("\(field.option.name) is given \(count) times") }
        }
        for word in given {
            guard let field = fields.first(where: { $0.option.name == word.name }) else {
                // The parser takes only the options the table declares.
                throw .usage("unknown option \(word.name)")
            }
            try field.apply(&options, word.value)
        }
        return options
    }
}

/// One option as the parser found it, by its long name; a flag's value is
/// empty.
struct GivenOption: Sendable, Equatable {
    let name: String
    let value: String
}

/// Which form a command prints: text, or JSON for `--json`, `-o json` or
/// `--output=json`; saying both forms at odds is a usage error.
struct OutputForm: Sendable, Equatable {
    private var flag = false
    private var format: OutputFormat?

    init() {}

    var isJSON: Bool { flag || format == .json }

    mutating func sayJSON() throws(CLIError) {
        flag = true
        try refuseTwoForms()
    }

    mutating func say(_ text: String) throws(CLIError) {
        guard let format = OutputFormat(rawValue: text) else {
            throw .usage(
                "--output \(text): text or json"
                    + Suggestion.hint(for: text, among: OutputFormat.allCases.map(\.rawValue)))
        }
        self.format = format
        try refuseTwoForms()
    }

    private func refuseTwoForms() throws(CLIError) {
        if flag, let format, format != .json {
            throw .usage("--json and --output \(format.rawValue) ask for two forms")
        }
    }
}
