/// A command's arguments as the parser found them (`CommandLineParser`):
/// its declared options with their values, and the operands. Unknown
/// options never get this far, so a command only asks for what it wants.
struct Arguments {
    /// Each option given, by its long name, with its values in order
    /// (an empty string for a flag).
    private let given: [String: [String]]
    private let operands: [String]
    /// The options the table declares for this command: asking for another
    /// is a mistake in the code, which debug builds catch at once.
    private let declared: Set<String>

    init(options: [String: [String]] = [:], operands: [String] = [], declared: Set<String> = []) {
        given = options
        self.operands = operands
        self.declared = declared
    }

    /// `--name` present?
    func flag(_ name: String) -> Bool {
        assert(declared.contains(name), "\(name) is not declared in the command table")
        return given[name] != nil
    }

    /// `--name VALUE` or `--name=VALUE`. Twice is refused: which one was
    /// meant is a guess (`--subscriber a --subscriber b`).
    func option(_ name: String) throws(CLIError) -> String? {
        assert(declared.contains(name), "\(name) is not declared in the command table")
        guard let values = given[name] else { return nil }
        guard values.count == 1 else { throw .usage("\(name) is given \(values.count) times") }
        return values.first
    }

    /// `--json`, `-o json` or `--output=json`; `-o text` is the default,
    /// and saying both forms at odds is a usage error.
    func json() throws(CLIError) -> Bool {
        let flag = flag("--json")
        guard let text = try option("--output") else { return flag }
        guard let format = OutputFormat(rawValue: text) else {
            throw .usage(
                "--output \(text): text or json"
                    + Suggestion.hint(for: text, among: OutputFormat.allCases.map(\.rawValue)))
        }
        if flag && format != .json { throw .usage("--json and --output \(text) ask for two forms") }
        return format == .json
    }

    /// The positional arguments, `--` and what follows it included.
    func positionals() throws(CLIError) -> [String] { operands }

    func noPositionals(_ command: String) throws(CLIError) {
        if let first = operands.first { throw .usage("\(command) takes no argument \(first)") }
    }
}
