import CourierTransport

/// `courier version`, the same as `courier --version`.
enum VersionCommand {
    static let command = Command(
        "version", summary: "print the version", example: "courier version",
        run: { operands, invocation throws(CLIError) in
            try operands.none(for: "version")
            show(invocation)
        })

    static func show(_ invocation: Invocation) {
        invocation.output.line("courier \(CourierVersion.current)")
    }
}
