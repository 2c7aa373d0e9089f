import CourierCore

/// `courier run [--background|--foreground] [--wait]` and `courier send-now`.
enum RunCommand {
    static func run(_ arguments: inout Arguments, _ invocation: Invocation, sendNow: Bool) throws(CLIError) {
        var mode: RoundMode = sendNow ? .foreground : .background
        var wait = sendNow
        if !sendNow {
            let background = arguments.flag("--background")
            let foreground = arguments.flag("--foreground")
            if background && foreground { throw .usage("run takes --background or --foreground, not both") }
            if foreground { mode = .foreground }
            // A person's foreground round waits for a background one.
            wait = arguments.flag("--wait") || foreground
        }
        try arguments.noPositionals(sendNow ? "send-now" : "run")
        let configuration = try invocation.configuration(readingSecrets: true)
        let spool: Spool
        do { spool = try Spool(path: configuration.spool) } catch { throw .spool(error) }
        let result: RoundResult
        do {
            result = try Round(spool: spool, configuration: configuration, mode: mode).run(wait: wait)
        } catch {
            throw .round(error)
        }
        switch result {
        case .busy:
            invocation.output.line(
                "another round is running on \(configuration.spool); nothing to do (use --wait to wait for it)")
        case .ran(let summary):
            invocation.output.line(describe(summary))
        }
    }

    static func describe(_ summary: RoundSummary) -> String {
        "round \(summary.round) (\(summary.mode.rawValue), \(summary.durationMilliseconds) ms): " + tally(summary)
    }

    static func tally(_ summary: RoundSummary) -> String {
        var parts = ["\(summary.sent) sent", "\(summary.needsAttention) need attention"]
        if summary.invalid > 0 { parts.append("\(summary.invalid) invalid") }
        if summary.accepted > 0 { parts.append("\(summary.accepted) accepted") }
        if summary.duplicates > 0 { parts.append("\(summary.duplicates) duplicate") }
        if summary.retries > 0 { parts.append("\(summary.retries) retries") }
        if summary.routesAttached > 0 { parts.append("\(summary.routesAttached) routes attached") }
        if summary.routeTimeouts > 0 { parts.append("\(summary.routeTimeouts) route timeouts") }
        if summary.recovered > 0 { parts.append("\(summary.recovered) recovered") }
        if summary.settling > 0 { parts.append("\(summary.settling) still being written") }
        return parts.joined(separator: ", ")
    }
}
