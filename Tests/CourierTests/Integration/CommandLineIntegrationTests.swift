import Foundation
import Testing

@testable import CourierCLI

/// The built binary's command line: help for every command, global options
/// anywhere, `--`, and the shell completions written from the table.
@Suite(.serialized, .tags(.integration)) struct CommandLineTests {
    /// Every command, subcommand and group, as the words that name it.
    static let commandNames = CommandTableTests.paths.map(\.0) + ["catalog"]

    @Test("every command's --help, -h and `help COMMAND` exit 0 and print its usage", arguments: commandNames)
    func everyCommandHasHelp(_ name: String) throws {
        let binary = try CourierBinary.locate()
        let words = name.split(separator: " ").map(String.init)
        let expected = try HelpCommand.text(for: words)
        for arguments in [words + ["--help"], words + ["-h"], ["help"] + words, ["-h"] + words] {
            let result = try binary.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.error)")
            #expect(result.output.hasPrefix("usage: courier \(name)"), "\(arguments): \(result.output)")
            #expect(result.output == expected + "\n", "\(arguments)")
            #expect(result.error.isEmpty, "\(arguments): \(result.error)")
        }
    }

    @Test("courier help lists every command with its summary and exits 0; courier alone prints it on stderr, exit 64")
    func theOverview() throws {
        let binary = try CourierBinary.locate()
        let help = try binary.run(["help"])
        #expect(help.status == 0)
        for (name, command) in CommandTableTests.paths {
            #expect(help.output.contains("  \(name)  "), "\(name)")
            #expect(help.output.contains(command.summary), "\(name)")
        }
        #expect(try binary.run(["--help"]).output == help.output)
        let bare = try binary.run([])
        #expect(bare.status == 64)
        #expect(bare.output.isEmpty, "a usage error writes nothing a pipe would take for an answer")
        #expect(bare.error == help.output)
        let onlyGlobals = try binary.run(["--quiet"])
        #expect(onlyGlobals.status == 64 && onlyGlobals.error == help.output)
    }

    @Test("help for a command that does not exist is a usage error")
    func helpForNothing() throws {
        let result = try CourierBinary.locate().run(["help", "nosuch"])
        #expect(result.status == 64)
        #expect(result.error.contains("no command nosuch"), "\(result.error)")
        #expect(result.output.isEmpty)
    }

    @Test(
        "a usage error naming a word with control bytes writes them escaped: stderr is one line a terminal shows as text",
        arguments: [
            ["hold", "a\u{1B}[31mb"], ["release", "x\ny"], ["status", "\u{1B}]0;owned\u{07}"],
            ["log", "--since=\u{1B}z"], ["catalog", "sync", "c\rd"], ["list", "--older-than", "1\u{7F}"],
        ])
    func controlBytesInUsageErrors(_ arguments: [String]) throws {
        let result = try CourierBinary.locate().run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.error)")
        #expect(result.output.isEmpty)
        let line = result.error.utf8.dropLast()
        #expect(result.error.hasSuffix("\n"))
        #expect(!line.contains { $0 < 0x20 || $0 == 0x7F }, "\(arguments): \(Array(result.error.utf8))")
        #expect(
            result.error.contains("\\x1b") || result.error.contains("\\n") || result.error.contains("\\r")
                || result.error.contains("\\x7f"), "the word is not named: \(result.error)")
    }

    @Test("global options work after the command: courier status --spool DIR")
    func globalOptionsAfterTheCommand() throws {
        let directory = TemporaryDirectory("cli")
        let binary = try CourierBinary.locate()
        let spool = directory.path + "/spool"
        // No configuration anywhere: the spool comes from --spool alone.
        let alone = ["COURIER_CONFIG": ""]
        let initialised = try binary.run(["init", "--spool", spool], environment: alone, in: directory.path)
        #expect(initialised.status == 0, "\(initialised.error)")
        let status = try binary.run(["status", "--spool", spool], environment: alone, in: directory.path)
        #expect(status.status == 0, "\(status.error)")
        #expect(status.output.hasPrefix("spool \(spool)\n"), "\(status.output)")
        let list = try binary.run(
            ["list", "needsAttention", "--spool=\(spool)", "-q", "--json"], environment: alone, in: directory.path)
        #expect(list.status == 0, "\(list.error)")
        #expect(list.output == "", "JSON Lines: nothing listed is no line")
    }

    @Test("-- ends the options: enqueue takes a record file whose name starts with a dash")
    func doubleDash() throws {
        let directory = TemporaryDirectory("cli")
        try directory.write("[courier]\nspool = spool\n[subscriber alpha]\nurl = http://127.0.0.1:1/\n", to: "c.conf")
        try directory.write(#"{"id":"dash-1","kind":"sleep"}"#, to: "-record.json")
        let binary = try CourierBinary.locate()
        #expect(try binary.run(["init", "--config", "c.conf"], in: directory.path).status == 0)
        let refused = try binary.run(["enqueue", "--config", "c.conf", "-record.json"], in: directory.path)
        #expect(refused.status == 64)
        #expect(refused.error.contains("unknown option -record.json for courier enqueue"), "\(refused.error)")
        let queued = try binary.run(["enqueue", "--config", "c.conf", "--", "-record.json"], in: directory.path)
        #expect(queued.status == 0, "\(queued.error)")
        #expect(queued.output.hasPrefix("queued -record.json as queued/"), "\(queued.output)")
    }

    @Test("a command's own usage error points at that command's help")
    func usageErrorsPointAtTheCommandsHelp() throws {
        let result = try CourierBinary.locate().run(["list", "nosuchstate", "--spool", "/nonexistent"])
        #expect(result.status == 64)
        #expect(result.error.contains("(see `courier list --help`)"), "\(result.error)")
    }

    @Test("the checked-in completion scripts are what courier completions prints, catalog and sink included")
    func completionsAreGenerated() throws {
        let binary = try CourierBinary.locate()
        for (shell, file) in [("bash", "courier.bash"), ("zsh", "_courier"), ("fish", "courier.fish")] {
            let printed = try binary.run(["completions", shell])
            #expect(printed.status == 0)
            let checkedIn = try String(
                contentsOfFile: Shell.repository + "/etc/completion/" + file, encoding: .utf8)
            #expect(
                printed.output == checkedIn,
                "etc/completion/\(file) differs from `courier completions \(shell)`: run `make completions`")
            for word in ["catalog", "catalogDeleted", "--max-connections", "--signing-secret-file", "--full"] {
                // fish names a long option without its dashes: `-l full`.
                let spelled = shell == "fish" && word.hasPrefix("--") ? "-l " + word.dropFirst(2) : word
                #expect(checkedIn.contains(spelled), "\(file) lacks \(spelled)")
            }
        }
        let csh = try binary.run(["completions", "csh"])
        #expect(csh.status == 64 && csh.error.contains("no completion for csh"), "\(csh.error)")
    }

    /// A spool with one entry in needsAttention/, and a configuration of
    /// subscribers alpha and beta and catalog products, for the shells to
    /// complete from.
    static func completionSetUp() throws -> (TemporaryDirectory, String, String) {
        let directory = TemporaryDirectory("cli")
        try directory.write(
            """
            [courier]
            spool = \(directory.path)/spool
            [subscriber alpha]
            url = http://127.0.0.1:9/
            [subscriber beta]
            url = http://127.0.0.1:9/
            [catalog products]
            url = http://127.0.0.1:9/products
            """, to: "c.conf")
        let binary = try CourierBinary.locate()
        #expect(try binary.run(["--config", directory.path + "/c.conf", "init"]).status == 0)
        try directory.write("{}", to: "spool/needsAttention/k-1@alpha.json")
        try directory.write("{}", to: "spool/queued/q-1@beta.json")
        // The completions ask `courier` itself: the built one, first on PATH.
        let path = URL(fileURLWithPath: binary.path).deletingLastPathComponent().path
        return (directory, directory.path + "/c.conf", path)
    }

    @Test("completions --list prints the configuration's subscribers and catalogs and a spool's entries")
    func theListedWords() throws {
        let (directory, config, _) = try Self.completionSetUp()
        let binary = try CourierBinary.locate()
        let names = try binary.run(["--config", config, "completions", "--list", "subscribers,catalogs"])
        #expect(names.output == "alpha\nbeta\nproducts\n", "\(names.output)\(names.error)")
        let prefixed = try binary.run(["--config", config, "completions", "--list", "subscribers", "--", "b"])
        #expect(prefixed.output == "beta\n")
        let entries = try binary.run([
            "--spool", directory.path + "/spool", "completions", "--list", "needsAttention,queued",
        ])
        #expect(entries.output == "k-1@alpha.json\nq-1@beta.json\n", "\(entries.output)")
        let nothing = try binary.run(["--spool", "/nonexistent", "completions", "--list", "queued"])
        #expect(nothing.status == 0 && nothing.output.isEmpty && nothing.error.isEmpty)
        #expect(try binary.run(["completions", "--list", "everything"]).status == 64)
    }

    @Test(
        "bash completes commands, catalog's subcommands, events, sink options, subscribers and entries",
        .needs(file: "/usr/share/bash-completion/bash_completion", from: "bash-completion"))
    func bashCompletes() throws {
        let (spool, config, path) = try Self.completionSetUp()
        let cases: [(String, [String])] = [
            ("courier cat", ["catalog"]),
            ("courier catalog ", ["sync", "status"]),
            ("courier catalog sync --f", ["--full"]),
            ("courier log --event catalog", ["catalogSynced", "catalogFailed", "catalogDeleted"]),
            ("courier log --event=catalogD", ["catalogDeleted"]),
            ("courier sink --max", ["--max-connections"]),
            ("courier status --sp", ["--spool"]),
            ("courier --quiet sta", ["status"]),
            ("courier list needs", ["needsAttention"]),
            ("courier ack --spool \(spool.path)/spool ", ["k-1@alpha.json"]),
            ("courier --config \(config) hold ", ["alpha", "beta"]),
            ("courier --config=\(config) list --subscriber b", ["beta"]),
            ("courier log --config \(config) --subscriber ", ["alpha", "beta", "products"]),
            ("courier --config \(config) send-now ", ["q-1@beta.json"]),
            ("courier status -o ", ["text", "json"]),
            ("courier help send", ["send-now"]),
            ("courier completions ", ["bash", "zsh", "fish"]),
        ]
        let script = TemporaryDirectory("bash")
        var text = """
            export PATH=\(path):$PATH
            source /usr/share/bash-completion/bash_completion
            source etc/completion/courier.bash
            complete_line() {
                COMP_LINE=$1
                COMP_POINT=${#COMP_LINE}
                # As bash splits words for completion: at blanks, and around `=`.
                read -ra COMP_WORDS <<< "${1//=/ = }"
                [[ $1 == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                COMPREPLY=()
                _courier courier "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                echo "${COMPREPLY[*]}"
            }

            """
        for (line, _) in cases { text += "complete_line '\(line)'\n" }
        try script.write(text, to: "complete.sh")
        let result = try Shell.run(["bash", script.path + "/complete.sh"])
        #expect(result.status == 0, "\(result.output)")
        let answers = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, (line, expected)) in cases.enumerated() {
            let answer = index < answers.count ? answers[index].split(separator: " ").map(String.init) : []
            #expect(answer == expected, "`\(line)` completed to \(answer)")
        }
    }

    /// Names a producer may give a file in queued/ that a shell would run
    /// or split if completion offered them as words.
    static let hostileNames = ["a$(touch${IFS}pwned)b.json", "c`touch${IFS}pwned`d.json", "e\nf.json", "~root"]

    @Test("completions --list offers no name a shell would expand, run or split; it offers the others")
    func theListedWordsAreInert() throws {
        let (directory, _, _) = try Self.completionSetUp()
        for name in Self.hostileNames { try directory.write("{}", to: "spool/queued/" + name) }
        try directory.write("{}", to: "spool/queued/export_2026-12-01.json")
        let entries = try CourierBinary.locate().run([
            "--spool", directory.path + "/spool", "completions", "--list", "queued",
        ])
        #expect(entries.status == 0)
        #expect(
            entries.output.split(separator: "\n").sorted() == ["export_2026-12-01.json", "q-1@beta.json"],
            "\(entries.output)")
    }

    @Test("list writes one row of seven cells per item, whatever bytes a producer put in a file's name")
    func listRowsHoldNoControlBytes() throws {
        let (directory, _, _) = try Self.completionSetUp()
        // A name that would forge a row of sent/, and one that retitles a terminal.
        try directory.write("{}", to: "spool/queued/x\tsent\tforged@alpha.json\nsent\ty.json")
        try directory.write("{}", to: "spool/queued/\u{1b}]0;owned\u{07}.json")
        let listed = try CourierBinary.locate().run(["--spool", directory.path + "/spool", "list", "queued"])
        #expect(listed.status == 0, "\(listed.error)")
        let rows = listed.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(rows.count == 3, "\(listed.output)")
        for row in rows { #expect(row.split(separator: "\t", omittingEmptySubsequences: false).count == 7, "\(row)") }
        #expect(!listed.output.contains("\u{1b}") && !listed.output.contains("\u{07}"), "\(listed.output)")
        #expect(listed.output.contains(#"x\tsent\tforged@alpha.json\nsent\ty.json"#), "\(listed.output)")
        #expect(listed.output.contains(#"\x1b]0;owned\x07.json"#), "\(listed.output)")
    }

    @Test("delete, its skipped files and why print a producer's file name with its control characters written out")
    func namesPrintedWithoutControlBytes() throws {
        let (directory, config, _) = try Self.completionSetUp()
        let binary = try CourierBinary.locate()
        try directory.write("not json", to: "spool/queued/x\ny.json")
        try directory.write("{}", to: "spool/queued/\u{1b}]0;owned\u{07}.json")
        // Files not taken in yet: passed over by a pick, and said so.
        let picked = try binary.run(["--config", config, "delete", "--state", "queued", "--all"])
        #expect(picked.error.contains(#"queued/x\ny.json"#), "\(picked.error)")
        #expect(!picked.error.contains("\ny.json") && !picked.error.contains("\u{1b}"), "\(picked.error)")
        let why = try binary.run(["--config", config, "why", "x\ny.json"])
        #expect(why.status == 0, "\(why.output)\(why.error)")
        #expect(why.output.contains(#"x\ny.json is in queued/"#), "\(why.output)")
        #expect(!why.output.contains("\ny.json"), "a name's newline split a line: \(why.output)")
        let deleted = try binary.run(["--config", config, "delete", "\u{1b}]0;owned\u{07}.json"])
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(deleted.output.contains(#"queued/\x1b]0;owned\x07.json -> deleted"#), "\(deleted.output)")
        #expect(!deleted.output.contains("\u{1b}"), "\(deleted.output)")
    }

    @Test("why explains a flagged file whose dropped name held a newline on lines of its own")
    func whyQuotesNoRawNewline() throws {
        let (directory, config, _) = try Self.completionSetUp()
        let binary = try CourierBinary.locate()
        try directory.write("{}", to: "spool/queued/m\nn.json")
        #expect(try binary.run(["--config", config, "run"]).status == 0)
        let why = try binary.run(["--config", config, "why", "m\nn.json"])
        #expect(why.output.contains(#"(dropped as m\nn.json)"#), "\(why.output)")
        #expect(!why.output.contains("\nn.json"), "\(why.output)")
    }

    @Test("status shows an OAuth server's refusal with its control characters written out")
    func tokenErrorsPrintedWithoutControlBytes() throws {
        let (directory, config, _) = try Self.completionSetUp()
        let binary = try CourierBinary.locate()
        #expect(try binary.run(["--config", config, "run"]).status == 0)
        // What a hostile token endpoint's error_description becomes.
        let file = directory.path + "/spool/.courier/last-round.json"
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        guard var summary = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw TestFailure("last-round.json is not an object")
        }
        summary["tokenErrors"] = ["alpha": "invalid_client (\u{1b}[2J\nlast round: forged)"]
        try JSONSerialization.data(withJSONObject: summary).write(to: URL(fileURLWithPath: file))
        let status = try binary.run(["--config", config, "status"])
        let shown = status.output
        #expect(shown.contains(#"got no token: invalid_client (\x1b[2J\nlast round: forged)"#), "\(shown)")
        #expect(!shown.contains("\u{1b}") && !shown.contains("\nlast round: forged"), "\(shown)")
    }

    @Test(
        "bash asks courier for a line's --spool ~/DIR as the shell will run it, in the home folder",
        .needs(file: "/usr/share/bash-completion/bash_completion", from: "bash-completion"))
    func bashExpandsTheTilde() throws {
        let (directory, _, path) = try Self.completionSetUp()
        let script = TemporaryDirectory("bash")
        try script.write(
            """
            export HOME=\(directory.path) PATH=\(path):$PATH
            source /usr/share/bash-completion/bash_completion
            source \(Shell.repository)/etc/completion/courier.bash
            for spool in '~/spool' '\(directory.path)/spool'; do
                COMP_WORDS=(courier --spool "$spool" why "")
                COMP_CWORD=4
                COMP_LINE="${COMP_WORDS[*]}"
                COMP_POINT=${#COMP_LINE}
                _courier courier "" why
                echo "${COMPREPLY[*]}"
            done
            """, to: "complete.sh")
        let result = try Shell.run(["bash", script.path + "/complete.sh"])
        #expect(result.output == "k-1@alpha.json q-1@beta.json\nk-1@alpha.json q-1@beta.json\n", "\(result.output)")
    }

    @Test(
        "bash's completion of a producer's file names in queued/ runs nothing a name holds",
        .needs(file: "/usr/share/bash-completion/bash_completion", from: "bash-completion"))
    func bashRunsNoName() throws {
        let (directory, config, path) = try Self.completionSetUp()
        for name in Self.hostileNames { try directory.write("{}", to: "spool/queued/" + name) }
        // What a name runs, it runs in the shell's folder: this one.
        let shell = TemporaryDirectory("bash")
        try shell.write(
            """
            cd \(shell.path)
            export PATH=\(path):$PATH
            source /usr/share/bash-completion/bash_completion
            source \(Shell.repository)/etc/completion/courier.bash
            COMP_WORDS=(courier --config \(config) send-now "")
            COMP_CWORD=4
            COMP_LINE="${COMP_WORDS[*]}"
            COMP_POINT=${#COMP_LINE}
            _courier courier "" send-now
            printf '%s\\n' "${COMPREPLY[@]}"
            """, to: "complete.sh")
        let result = try Shell.run(["bash", shell.path + "/complete.sh"])
        #expect(result.status == 0, "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: shell.path + "/pwned"), "a file name ran as a command")
        #expect(result.output == "q-1@beta.json\n", "\(result.output)")
    }

    @Test(
        "zsh completes catalog's subcommands with their summaries, events, sink options, subscribers and entries",
        .needs("zsh"),
        arguments: [
            ("courier catalog ", ["sync", "status", "pull catalog deltas"]),
            ("courier log --event=catalog", ["catalogSynced", "catalogDeleted"]),
            ("courier sink --max", ["--max-connections"]),
            ("courier sink --listen 127.0.0.1:0 --signing", ["--signing-secret-file"]),
            ("courier --config CONFIG hold ", ["alpha", "beta"]),
            ("courier --config CONFIG why k-", ["k-1@alpha.json"]),
        ])
    func zshCompletes(_ line: String, _ expected: [String]) throws {
        // The spool and configuration live as long as the test does.
        let (spool, config, path) = try Self.completionSetUp()
        defer { withExtendedLifetime(spool) {} }
        let line = line.replacingOccurrences(of: "CONFIG", with: config)
        let folder = TemporaryDirectory("zsh")
        try FileManager.default.copyItem(
            atPath: Shell.repository + "/etc/completion/_courier", toPath: folder.path + "/_courier")
        // An interactive zsh on a pseudo-terminal, where completion runs as
        // it does for a person; two tabs list the choices.
        try folder.write(
            """
            zmodload zsh/zpty
            zpty z 'zsh -f -i'
            zpty -w z 'PS1="%% "; PATH=\(path):$PATH; fpath=(\(folder.path) $fpath); autoload -Uz compinit; compinit -u -D'
            zpty -w -n z $'\(line)\\t\\t'
            out=""
            for (( i = 0; i < 100; i++ )); do
                zpty -r -t z chunk && out+=$chunk
                [[ $out == *"\(expected.last ?? "")"* ]] && break
                sleep 0.1
            done
            print -r -- "$out"
            zpty -d z
            """, to: "complete.zsh")
        let result = try Shell.run(["zsh", "-f", folder.path + "/complete.zsh"])
        for word in expected { #expect(result.output.contains(word), "`\(line)`: \(result.output)") }
    }

    @Test(
        "fish completes commands, catalog's subcommands, options, subscribers and entries", .needs("fish"),
        arguments: [
            ("courier cat", ["catalog"]),
            ("courier catalog ", ["status", "sync"]),
            ("courier --spool DIR list --sub", ["--subscriber"]),
            ("courier --config CONFIG hold ", ["alpha", "beta"]),
            ("courier --config CONFIG why k", ["k-1@alpha.json"]),
            ("courier status -o ", ["json", "text"]),
            ("courier log --event catalogS", ["catalogSynced"]),
        ])
    func fishCompletes(_ line: String, _ expected: [String]) throws {
        let (directory, config, path) = try Self.completionSetUp()
        let line = line.replacingOccurrences(of: "CONFIG", with: config).replacingOccurrences(
            of: "DIR", with: directory.path + "/spool")
        let script = TemporaryDirectory("fish")
        try script.write(
            """
            set -x PATH \(path) $PATH
            source \(Shell.repository)/etc/completion/courier.fish
            complete -C '\(line)'
            """, to: "complete.fish")
        let result = try Shell.run(["fish", "--no-config", script.path + "/complete.fish"])
        let words = result.output.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
        #expect(words == expected, "`\(line)`: \(result.output)")
    }
}
