import CourierIdentifiers

/// A command's positional words read into its own type once, when the
/// command line is parsed, as its options are (`CommandOptions`): a word
/// that is not what the command takes is a usage error before it runs.
protocol CommandOperands: Sendable {
    /// `usage`: `NAME USAGE`, as the error for the wrong number of words
    /// shows it.
    static func read(_ words: [String], usage: String) throws(CLIError) -> Self
}

/// A command's positional words, `--` and what follows it included.
struct Operands: Sendable, Equatable {
    let words: [String]

    init(_ words: [String] = []) { self.words = words }

    var isEmpty: Bool { words.isEmpty }
    var count: Int { words.count }
    var first: String? { words.first }

    /// For a command that takes none.
    func none(for command: String) throws(CLIError) {
        if let first = words.first { throw .usage("\(command) takes no argument \(first)") }
    }

    /// Exactly one, else the usage error `usage`.
    func one(_ usage: String) throws(CLIError) -> String {
        guard words.count == 1, let word = words.first else { throw .usage(usage) }
        return word
    }
}

extension Operands: CommandOperands {
    static func read(_ words: [String], usage: String) throws(CLIError) -> Operands { Operands(words) }
}

/// `hold NAME`, `release NAME`: exactly one subscriber name.
struct SubscriberOperand: CommandOperands {
    let name: SubscriberName

    static func read(_ words: [String], usage: String) throws(CLIError) -> SubscriberOperand {
        let word = try Operands(words).one(usage)
        guard let name = SubscriberName(optionText: word) else {
            throw .usage("\(word): \(SubscriberName.expected)")
        }
        return SubscriberOperand(name: name)
    }
}

/// `catalog sync [NAME]`, `catalog status [NAME]`: one catalog's name, or
/// none for every catalog.
struct CatalogOperand: CommandOperands {
    let name: SubscriberName?

    static func read(_ words: [String], usage: String) throws(CLIError) -> CatalogOperand {
        // `usage` names the subcommand alone (`sync [NAME]`); the error's
        // pointer to `courier catalog sync --help` names the group.
        guard words.count <= 1 else { throw .usage("at most one catalog NAME") }
        guard let word = words.first else { return CatalogOperand(name: nil) }
        guard let name = SubscriberName(word) else {
            throw .usage("\(word): not a catalog name")
        }
        return CatalogOperand(name: name)
    }
}
