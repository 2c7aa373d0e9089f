import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool

/// `courier completions bash|zsh|fish`: the shell completion script,
/// written from the command table. etc/completion/ holds this output,
/// checked in; a test fails when it differs, and `make completions`
/// rewrites it. `courier completions --list WHAT [PREFIX]` is what those
/// scripts ask for the words only courier can find: the configuration's
/// subscribers and catalogs, a spool's entries.
enum CompletionsCommand {
    static let command = Command(
        "completions", summary: "print the bash, zsh or fish completion script",
        usage: "bash|zsh|fish, or --list WHAT [PREFIX]",
        details: """
            --list prints, one a line, the words a completion offers that only the spool and the
            configuration know: WHAT is subscribers, catalogs, or state folders whose entries to
            list, joined by commas (needsAttention,failed); only words that start with PREFIX,
            at most \(listLimit); a file name with a blank, a newline or a byte a shell expands is
            never offered. A configuration or spool that cannot be read gives no words.
            """,
        options: Options.fields,
        operands: .words(Shell.allCases.map(\.rawValue)),
        example: "courier completions bash > ~/.local/share/bash-completion/completions/courier",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var list: [Listed]?

        static let fields: [OptionField<Options>] = [
            .value(
                "--list", "WHAT", "the words to offer: subscribers, catalogs, or STATE[,STATE…]", \.list,
                completion: .words(["subscribers", "catalogs"] + SpoolState.allCases.map(\.rawValue)),
                expected: "not subscribers, catalogs or states joined by commas", read: Listed.kinds)
        ]
    }

    enum Shell: String, CaseIterable {
        case bash, zsh, fish
    }

    /// A shell shows no more than a screenful or two; a queue of a million
    /// entries must not be printed to it.
    static let listLimit = 1000

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        if let kinds = options.list {
            guard operands.count <= 1 else { throw .usage("completions --list WHAT [PREFIX]") }
            list(kinds, prefix: operands.first ?? "", invocation)
            return
        }
        let word = try operands.one("completions bash|zsh|fish")
        guard let shell = Shell(rawValue: word) else {
            throw .usage(
                "completions bash|zsh|fish: no completion for \(word)"
                    + Suggestion.hint(for: word, among: Shell.allCases.map(\.rawValue)))
        }
        switch shell {
        case .bash: invocation.output.line(BashCompletion.script())
        case .zsh: invocation.output.line(ZshCompletion.script())
        case .fish: invocation.output.line(FishCompletion.script())
        }
    }

    /// Whether a file name may be offered as a word: entry names, flagged
    /// names and dropped names of id bytes, `@` and `#`, not hidden. A
    /// producer names its files in queued/ as it likes, and a shell would
    /// split a name at a newline or blank, and bash's `compgen -W` runs
    /// the `$(…)` or backquotes a word holds (in the shell of whoever
    /// pressed tab, often root's): such a name is typed, never offered.
    static func isInert(_ name: FileName) -> Bool {
        name.bytes.first != UInt8(ascii: ".")
            && name.bytes.allSatisfy { NameBytes.isID($0) || $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "#") }
    }

    /// The words, one a line. Whatever cannot be read is passed over in
    /// silence: a completion has nowhere to say it.
    static func list(_ kinds: [Listed], prefix: String, _ invocation: Invocation) {
        var printed = 0
        func offer(_ word: String) {
            guard printed < listLimit, word.hasPrefix(prefix) else { return }
            invocation.output.line(word)
            printed += 1
        }
        let configuration = (try? invocation.configurationIfAny(readingSecrets: false)) ?? nil
        let spool = try? invocation.readSpool()
        for kind in kinds {
            switch kind {
            case .subscribers:
                for subscriber in configuration?.subscribers ?? [] { offer(subscriber.name.value) }
            case .catalogs:
                for catalog in configuration?.catalogs ?? [] { offer(catalog.name.value) }
            case .entries(let state):
                guard let spool, let stream = try? spool.directory(state).entries() else { continue }
                while printed < listLimit, let name = try? stream.next() {
                    if isInert(name) { offer(name.description) }
                }
            }
        }
    }
}
