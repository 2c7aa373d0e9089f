/// A command's arguments after the command word: options are taken out
/// by name, what is left is positional. Small on purpose; courier's
/// commands have few options.
struct Arguments {
    private(set) var remaining: [String]

    init(_ arguments: [String]) { remaining = arguments }

    /// `--name` present?
    mutating func flag(_ name: String) -> Bool {
        guard let index = remaining.firstIndex(of: name) else { return false }
        remaining.remove(at: index)
        return true
    }

    /// `--name VALUE` or `--name=VALUE`.
    mutating func option(_ name: String) throws(CLIError) -> String? {
        if let index = remaining.firstIndex(of: name) {
            guard index + 1 < remaining.count else { throw .usage("\(name) needs a value") }
            let value = remaining[index + 1]
            remaining.removeSubrange(index...(index + 1))
            return value
        }
        if let index = remaining.firstIndex(where: { $0.hasPrefix(name + "=") }) {
            let value = String(remaining[index].dropFirst(name.count + 1))
            remaining.remove(at: index)
            return value
        }
        return nil
    }

    /// What is left, refusing any option nobody took.
    func positionals() throws(CLIError) -> [String] {
        if let unknown = remaining.first(where: { $0.hasPrefix("--") || ($0.hasPrefix("-") && $0 != "-") }) {
            throw .usage("unknown option \(unknown)")
        }
        return remaining
    }

    func noPositionals(_ command: String) throws(CLIError) {
        let rest = try positionals()
        if let first = rest.first { throw .usage("\(command) takes no argument \(first)") }
    }
}
