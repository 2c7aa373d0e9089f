import CourierPosix
import Foundation

/// `courier [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]`: the table in
/// CommandTable.swift says what each word may be.
package enum CourierCommandLine {
    /// Runs the command line and returns the process's exit status.
    package static func run(_ arguments: [String], environment: [String: String]) -> ExitStatus {
        var invocation = Invocation(environment: environment)
        var command: String?
        do throws(CLIError) {
            let parsed = try CommandLineParser().parse(arguments)
            command = parsed.path.isEmpty ? nil : parsed.commandName
            invocation.configPath = parsed.global.configPath
            invocation.spoolPath = parsed.global.spoolPath
            invocation.quiet = parsed.global.quiet
            invocation.verbose = parsed.global.verbose
            if parsed.global.help {
                invocation.output.line(HelpText.command(parsed.path))
                return .ok
            }
            if parsed.global.version {
                VersionCommand.show(invocation)
                return .ok
            }
            guard let command = parsed.path.last, let prepare = command.prepare else {
                HelpCommand.printUsage(invocation.output)
                return .usage
            }
            // Every option read into its type (or refused) before the
            // command does anything.
            let run = try prepare(parsed.words)
            try run(invocation)
            return .ok
        } catch {
            // A command's own usage error points at its own help.
            if case .usage(let text) = error, let command {
                invocation.output.error("fatal: usage: \(text) (see `courier \(command) --help`)")
            } else if let message = error.message {
                invocation.output.error("fatal: " + message)
            }
            return error.status
        }
    }

    /// The process entry point: a few lines, so that everything above is
    /// testable in process.
    package static func main() -> Never {
        OpenFileLimit.raiseToHard()
        let status = run(
            Array(Swift.CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        exit(status.rawValue)
    }
}
