import Testing

@testable import CourierCLI
@testable import CourierIdentifiers
@testable import CourierPosix
@testable import CourierSupport

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
        #expect(parsed.global.spoolPath == "/s")
    }

    @Test("-q, -v, --quiet and --verbose after the command set the log level")
    func logLevelOptionsAfterTheCommand() throws {
        let parsed = try parser.parse(["list", "-q", "needsAttention", "--verbose"])
        #expect(parsed.global.quiet && parsed.global.verbose)
        #expect(parsed.words.operands == ["needsAttention"])
    }

    @Test("a command's options take --opt VALUE and --opt=VALUE, before or after its operands")
    func commandOptionValues() throws {
        let parsed = try parser.parse(["copy", "--subscriber", "beta", "k@alpha"])
        #expect(try Self.options(parsed, CopyCommand.Options.fields).subscriber == SubscriberName("beta"))
        #expect(parsed.words.operands == ["k@alpha"])
        let joined = try parser.parse(["copy", "k@alpha", "--subscriber=beta"])
        #expect(try Self.options(joined, CopyCommand.Options.fields).subscriber == SubscriberName("beta"))
        let empty = try parser.parse(["log", "--subscriber="])
        #expect(try Self.options(empty, LogCommand.Options.fields).subscriber == "")
    }

    @Test("-- ends the options: what follows is an operand even when it starts with a dash")
    func doubleDashEndsOptions() throws {
        let parsed = try parser.parse(["enqueue", "--", "-record.json", "--json"])
        #expect(parsed.words.operands == ["-record.json", "--json"])
        let stdin = try parser.parse(["enqueue", "-"])
        #expect(stdin.words.operands == ["-"])
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
        #expect(try parser.parse(["status", "--help"]).global.help)
        #expect(try parser.parse(["-h", "status"]).commandName == "status")
        let group = try parser.parse(["catalog", "-h"])
        #expect(group.global.help && group.commandName == "catalog")
        #expect(
            try parser.parse(["list", "--older-than", "soon", "--help"]).global.help, "a bad value is not read yet")
        #expect(try parser.parse(["catalog", "sync", "--full", "--help"]).commandName == "catalog sync")
    }

    @Test("a command option given twice is refused before the command runs; a global one given twice counts the last")
    func repeats() throws {
        let parsed = try parser.parse(["--spool", "/a", "backfill", "--subscriber", "a", "--subscriber", "b"])
        #expect(throws: CLIError.self) { try Self.options(parsed, BackfillCommand.Options.fields) }
        #expect(try parser.parse(["--spool", "/a", "status", "--spool", "/b"]).global.spoolPath == "/b")
        let flags = try parser.parse(["prune", "--dry-run", "--dry-run"])
        #expect(try Self.options(flags, PruneCommand.Options.fields).dryRun, "a flag twice is the flag")
    }

    @Test("help for a command that does not exist is a usage error")
    func helpForNothing() throws {
        #expect(throws: CLIError.self) { try HelpCommand.text(for: ["nosuch"]) }
        #expect(throws: CLIError.self) { try HelpCommand.text(for: ["status", "extra"]) }
        #expect(
            try HelpCommand.text(for: ["catalog", "sync"]).hasPrefix("usage: courier catalog sync [NAME] [--full]"))
    }

    @Test("help for a subcommand that does not exist offers the close one, as the command line does")
    func helpForAMistypedSubcommand() {
        for (words, message) in [
            (["catalog", "synk"], "no command catalog synk (did you mean `sync`?)"),
            (["catalog", "frobnicate"], "no command catalog frobnicate"),
        ] {
            do {
                _ = try HelpCommand.text(for: words)
                Issue.record("\(words): no error")
            } catch {
                guard case .usage(let text) = error else {
                    Issue.record("\(words): \(error)")
                    continue
                }
                #expect(text == message)
            }
        }
    }

    @Test("a guess is offered only when one word is close: a unique prefix, or one or two edits away")
    func suggestions() {
        #expect(Suggestion.closest(to: "stat", among: ["status", "send-now"]) == "status")
        #expect(Suggestion.closest(to: "s", among: ["status", "send-now"]) == nil, "too short to be a prefix")
        #expect(Suggestion.closest(to: "lst", among: ["list", "log"]) == "list")
        #expect(Suggestion.closest(to: "lg", among: ["log", "list"]) == "log")
        #expect(Suggestion.closest(to: "frobnicate", among: CommandTable.names) == nil)
        #expect(Suggestion.closest(to: "--full", among: ["--help", "--json"]) == nil, "three edits is no guess")
        #expect(Suggestion.closest(to: "ab", among: ["ac", "ad"]) == nil, "two as close: no guess")
        #expect(Suggestion.distance(Array("stauts"), Array("status")) == 1, "a swap is one edit")
    }

    @Test(
        "-o json and --output=json ask for JSON as --json does; -o text for text; a form at odds is refused",
        arguments: [
            (["status", "-o", "json"], true), (["status", "--output=json"], true), (["status", "--json"], true),
            (["status", "-o", "text"], false), (["status"], false), (["status", "--output", "json", "--ages"], true),
            (["status", "-o", "json", "--json"], true),
        ])
    func outputForms(_ words: [String], _ json: Bool) throws {
        #expect(try Self.options(parser.parse(words), StatusCommand.Options.fields).output.isJSON == json)
        let list = try parser.parse(["list", "--output", "json", "queued"])
        #expect(try Self.options(list, ListCommand.Options.fields).output.isJSON)
    }

    @Test("an output form courier does not know, or one at odds with --json, is a usage error that says why")
    func badOutputForms() throws {
        do {
            _ = try Self.options(parser.parse(["status", "-o", "jsno"]), StatusCommand.Options.fields)
            Issue.record("-o jsno was taken")
        } catch {
            #expect(error.message?.contains("--output jsno: text or json (did you mean `json`?)") == true)
        }
        for words in [["status", "--json", "-o", "text"], ["status", "-o", "text", "--json"]] {
            #expect(throws: CLIError.self, "\(words)") {
                try Self.options(parser.parse(words), StatusCommand.Options.fields)
            }
        }
    }

    @Test(
        "a value an option or operand cannot take is a usage error naming it and the value, before the command runs",
        arguments: [
            (["list", "--older-than", "5"], "--older-than 5: not a duration (such as 90s, 30m, 2h, 7d)"),
            (["ack", "--older-than", "soon"], "--older-than soon: not a duration"),
            (["prune", "--retention", "1y"], "--retention 1y: not a duration"),
            (["copy", "k", "--subscriber", "a/b"], "--subscriber a/b: not a subscriber name"),
            (["etag", "k", "--subscriber", "a/b"], "--subscriber a/b: not a subscriber name"),
            (["ack", "--subscriber", "a b"], "--subscriber a b: not a subscriber name"),
            (["backfill", "--subscriber", "a/b"], "--subscriber a/b: not a subscriber name"),
            (["backfill", "--since", "2026-13-01"], "--since 2026-13-01: not YYYY-MM-DD or RFC 3339"),
            (["ack", "--state", "sent"], "--state sent: ack takes needsAttention"),
            (["delete", "--state", "queud"], "--state queud: delete takes "),
            (["log", "--event", "snet"], "--event snet: not an event ("),
            (["log", "--since", "soon"], "--since soon: not a time; give today"),
            (["log", "-n", "-1"], "--lines -1: not a number of lines"),
            (["sink", "--max-connections", "0"], "--max-connections 0: not a number from 1 to 10000"),
            (["sink", "--listen", "localhost"], "--listen localhost: not HOST:PORT"),
            (["sink", "--oauth", ":f"], "--oauth :f: not CLIENT_ID:SECRET_FILE"),
            (["sink", "--oauth-token-lifetime", "0s"], "--oauth-token-lifetime 0s: not a duration of 1s or more"),
            (["sink", "--page-cursor", "cursor"], "--page-cursor cursor: not next_cursor or nextCursor"),
            (["completions", "--list", "subscribers,sent,nothing"], "--list subscribers,sent,nothing: not "),
            (["why", "x", "-o", "yaml"], "--output yaml: text or json"),
            (["hold", "a/b"], "a/b: not a subscriber name"),
            (["hold"], "hold NAME [--reason TEXT]"),
            (["release", "a b"], "a b: not a subscriber name"),
            (["release", "a", "b"], "release NAME"),
            (["catalog", "sync", "x/y"], "x/y: not a catalog name"),
            (["catalog", "status", "a", "b"], "at most one catalog NAME"),
        ])
    func badValues(_ words: [String], _ message: String) throws {
        let parsed = try parser.parse(words)
        let command = try #require(parsed.path.last?.prepare)
        do {
            _ = try command(parsed.words)
            Issue.record("\(words) was taken")
        } catch {
            guard case .usage(let text) = error else {
                Issue.record("\(words): \(error)")
                return
            }
            #expect(text.hasPrefix(message), "\(words): \(text)")
        }
    }

    @Test("each command's options come read into their types: names, durations, states, events and times")
    func typedOptions() throws {
        let ack = try Self.options(
            parser.parse(["ack", "--subscriber", "alpha", "--state", "needsAttention/", "--older-than", "2d", "--all"]),
            ManualMoveCommand.Options.fields(.ack))
        #expect(ack.subscriber == SubscriberName("alpha") && ack.state == .needsAttention && ack.all)
        #expect(ack.olderThan == .seconds(172_800))
        let log = try Self.options(
            parser.parse(["log", "--since", "-1h", "--until", "2026-11-30", "--event", "sent", "-n", "5", "-f"]),
            LogCommand.Options.fields)
        #expect(log.since == .ago(.seconds(3600)) && log.event == .sent && log.lines == 5 && log.follow)
        #expect(log.until == Timestamp(dateOrTime: "2026-11-30").map(TimeExpression.at))
        let backfill = try Self.options(
            parser.parse(["backfill", "--since", "2026-11-01", "--until", "2026-11-30T12:00:00Z"]),
            BackfillCommand.Options.fields)
        #expect(backfill.since?.isDay == true && backfill.until?.isDay == false)
    }

    /// The options `fields` read from what the parser found.
    static func options<Options: CommandOptions>(
        _ parsed: CommandLineParser.Result, _ fields: [OptionField<Options>]
    ) throws(CLIError) -> Options {
        try Options.read(parsed.words.options, by: fields)
    }
}
