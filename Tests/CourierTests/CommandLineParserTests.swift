import Testing

@testable import CourierCLI

/// The parser over the command table: where options may stand, how values
/// are given, and what is refused.
@Suite struct CommandLineParserTests {
    let parser = CommandLineParser()

    @Test(
        "global options work before or after the command, in either value form",
        arguments: [
            ["--spool", "/s", "status"], ["status", "--spool", "/s"], ["status", "--spool=/s"],
            ["--spool=/s", "status"], ["status", "--json", "--spool", "/s"],
        ])
    func globalOptionsStandAnywhere(_ words: [String]) throws {
        let parsed = try parser.parse(words)
        #expect(parsed.commandName == "status")
        #expect(parsed.spoolPath == "/s")
    }

    @Test("-q, -v, --quiet and --verbose after the command set the log level")
    func logLevelOptionsAfterTheCommand() throws {
        let parsed = try parser.parse(["list", "-q", "needsAttention", "--verbose"])
        #expect(parsed.quiet && parsed.verbose)
        #expect(try parsed.arguments.positionals() == ["needsAttention"])
    }

    @Test("a command's options take --opt VALUE and --opt=VALUE, before or after its operands")
    func commandOptionValues() throws {
        let parsed = try parser.parse(["copy", "--subscriber", "beta", "k@alpha"])
        #expect(try parsed.arguments.option("--subscriber") == "beta")
        #expect(try parsed.arguments.positionals() == ["k@alpha"])
        let joined = try parser.parse(["copy", "k@alpha", "--subscriber=beta"])
        #expect(try joined.arguments.option("--subscriber") == "beta")
        let empty = try parser.parse(["log", "--subscriber="])
        #expect(try empty.arguments.option("--subscriber") == "")
    }

    @Test("-- ends the options: what follows is an operand even when it starts with a dash")
    func doubleDashEndsOptions() throws {
        let parsed = try parser.parse(["enqueue", "--", "-record.json", "--json"])
        #expect(try parsed.arguments.positionals() == ["-record.json", "--json"])
        let stdin = try parser.parse(["enqueue", "-"])
        #expect(try stdin.arguments.positionals() == ["-"])
    }

    @Test(
        "what the table does not declare is a usage error that names it",
        arguments: [
            (["list", "--colour"], "unknown option --colour for courier list"),
            (["enqueue", "-record.json"], "unknown option -record.json for courier enqueue"),
            (["--colour", "list"], "unknown option --colour"),
            (["catalog", "status", "--full"], "unknown option --full for courier catalog status"),
            (["status", "--json=yes"], "--json takes no value"),
            (["log", "--event"], "--event needs a value"),
            (["status", "--spool"], "--spool needs a value"),
            (["frobnicate"], "unknown command frobnicate"),
            (["catalog"], "catalog needs a command: sync or status"),
            (["catalog", "fetch"], "unknown command catalog fetch (sync or status)"),
            (["stauts"], "unknown command stauts (did you mean `status`?)"),
            (["sned-now"], "unknown command sned-now (did you mean `send-now`?)"),
            (["status", "--jsn"], "unknown option --jsn for courier status (did you mean `--json`?)"),
            (["log", "--sinse", "-1h"], "unknown option --sinse for courier log (did you mean `--since`?)"),
            (["--spol", "/s", "status"], "unknown option --spol (did you mean `--spool`?)"),
            (["catalog", "stauts"], "unknown command catalog stauts (did you mean `status`?)"),
        ])
    func refusals(_ words: [String], _ message: String) {
        #expect(throws: CLIError.self) { try parser.parse(words) }
        do {
            _ = try parser.parse(words)
        } catch {
            guard case .usage(let text) = error else {
                Issue.record("\(words): \(error)")
                return
            }
            #expect(text == message)
        }
    }

    @Test("--help and -h anywhere ask for the help of the command named so far")
    func helpAnywhere() throws {
        #expect(try parser.parse(["status", "--help"]).help)
        #expect(try parser.parse(["-h", "status"]).commandName == "status")
        let group = try parser.parse(["catalog", "-h"])
        #expect(group.help && group.commandName == "catalog")
        #expect(try parser.parse(["catalog", "sync", "--full", "--help"]).commandName == "catalog sync")
    }

    @Test("a command option given twice is refused when asked for; a global one given twice counts the last")
    func repeats() throws {
        let parsed = try parser.parse(["--spool", "/a", "backfill", "--subscriber", "a", "--subscriber", "b"])
        #expect(throws: CLIError.self) { try parsed.arguments.option("--subscriber") }
        #expect(try parser.parse(["--spool", "/a", "status", "--spool", "/b"]).spoolPath == "/b")
    }

    @Test("help for a command that does not exist is a usage error")
    func helpForNothing() throws {
        #expect(throws: CLIError.self) { try HelpCommand.text(for: ["nosuch"]) }
        #expect(throws: CLIError.self) { try HelpCommand.text(for: ["status", "extra"]) }
        #expect(
            try HelpCommand.text(for: ["catalog", "sync"]).hasPrefix("usage: courier catalog sync [NAME] [--full]"))
    }

    @Test("a guess is offered only when one word is close: a unique prefix, or one or two edits away")
    func suggestions() {
        #expect(Suggestion.closest(to: "stat", among: ["status", "send-now"]) == "status")
        #expect(Suggestion.closest(to: "s", among: ["status", "send-now"]) == nil, "too short to be a prefix")
        #expect(Suggestion.closest(to: "lst", among: ["list", "log"]) == "list")
        #expect(Suggestion.closest(to: "lg", among: ["log", "list"]) == "log")
        #expect(Suggestion.closest(to: "frobnicate", among: CommandTable.commands.map(\.name)) == nil)
        #expect(Suggestion.closest(to: "--full", among: ["--help", "--json"]) == nil, "three edits is no guess")
        #expect(Suggestion.closest(to: "ab", among: ["ac", "ad"]) == nil, "two as close: no guess")
        #expect(Suggestion.distance(Array("stauts"), Array("status")) == 1, "a swap is one edit")
    }

    @Test(
        "-o json and --output=json ask for JSON as --json does; -o text for text; a form at odds is refused",
        arguments: [
            (["status", "-o", "json"], true), (["status", "--output=json"], true), (["status", "--json"], true),
            (["status", "-o", "text"], false), (["status"], false), (["list", "--output", "json", "queued"], true),
        ])
    func outputForms(_ words: [String], _ json: Bool) throws {
        #expect(try parser.parse(words).arguments.json() == json)
    }

    @Test("an output form courier does not know, or one at odds with --json, is a usage error that says why")
    func badOutputForms() throws {
        do {
            _ = try parser.parse(["status", "-o", "jsno"]).arguments.json()
            Issue.record("-o jsno was taken")
        } catch {
            #expect(error.message?.contains("--output jsno: text or json (did you mean `json`?)") == true)
        }
        #expect(throws: CLIError.self) { try parser.parse(["status", "--json", "-o", "text"]).arguments.json() }
    }
}
