import CourierTransport
import Foundation

/// `courier [--config FILE] [--spool DIR] COMMAND …`
public enum CourierCommandLine {
    /// Runs the command line and returns the process's exit status.
    public static func run(_ arguments: [String], environment: [String: String]) -> ExitStatus {
        var invocation = Invocation(environment: environment)
        var rest = arguments
        do {
            while let first = rest.first, first.hasPrefix("-") {
                switch first {
                case "--config", "--spool":
                    guard rest.count > 1 else { throw CLIError.usage("\(first) needs a value") }
                    if first == "--config" { invocation.configPath = rest[1] } else { invocation.spoolPath = rest[1] }
                    rest.removeFirst(2)
                case "--quiet", "-q":
                    invocation.quiet = true
                    rest.removeFirst()
                case "--verbose", "-v":
                    invocation.verbose = true
                    rest.removeFirst()
                case "--version":
                    invocation.output.line("courier \(CourierVersion.current)")
                    return .ok
                case "--help", "-h":
                    rest = ["help"] + rest.dropFirst()
                default:
                    if first.hasPrefix("--config=") {
                        invocation.configPath = String(first.dropFirst("--config=".count))
                    } else if first.hasPrefix("--spool=") {
                        invocation.spoolPath = String(first.dropFirst("--spool=".count))
                    } else {
                        throw CLIError.usage("unknown option \(first)")
                    }
                    rest.removeFirst()
                }
            }
            guard let command = rest.first else {
                HelpCommand.printUsage(invocation.output)
                return .usage
            }
            var commandArguments = Arguments(Array(rest.dropFirst()))
            try dispatch(command, &commandArguments, invocation)
            return .ok
        } catch let error as CLIError {
            if let message = error.message { invocation.output.error("fatal: " + message) }
            return error.status
        } catch {
            invocation.output.error("fatal: \(error)")
            return .software
        }
    }

    private static func dispatch(_ command: String, _ arguments: inout Arguments, _ invocation: Invocation)
        throws(CLIError)
    {
        switch command {
        case "init": try InitCommand.run(&arguments, invocation)
        case "enqueue": try EnqueueCommand.run(&arguments, invocation)
        case "run": try RunCommand.run(&arguments, invocation, sendNow: false)
        case "send-now": try RunCommand.run(&arguments, invocation, sendNow: true)
        case "status": try StatusCommand.run(&arguments, invocation)
        case "list": try ListCommand.run(&arguments, invocation)
        case "why": try WhyCommand.run(&arguments, invocation)
        case "ack": try ManualMoveCommand.run(&arguments, invocation, resend: false)
        case "resend": try ManualMoveCommand.run(&arguments, invocation, resend: true)
        case "hold": try HoldCommand.run(&arguments, invocation)
        case "release": try ReleaseCommand.run(&arguments, invocation)
        case "log": try LogCommand.run(&arguments, invocation)
        case "check": try CheckCommand.run(&arguments, invocation)
        case "prune": try PruneCommand.run(&arguments, invocation)
        case "copy": try CopyCommand.run(&arguments, invocation)
        case "backfill": try BackfillCommand.run(&arguments, invocation)
        case "catalog": try CatalogCommand.run(&arguments, invocation)
        case "sink": try SinkCommand.run(&arguments, invocation)
        case "demo": try DemoCommand.run(&arguments, invocation)
        case "help": HelpCommand.run(arguments, invocation)
        case "version": invocation.output.line("courier \(CourierVersion.current)")
        default: throw .usage("unknown command \(command)")
        }
    }

    /// The process entry point: a few lines, so that everything above is
    /// testable in process.
    public static func main() -> Never {
        let status = run(
            Array(Swift.CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        exit(status.rawValue)
    }
}
