import CourierOperations
import CourierSpool
import Foundation

/// `courier enqueue [FILE...|-]`: validate records and drop them atomically.
enum EnqueueCommand {
    static let command = Command(
        "enqueue", summary: "validate records and drop them atomically into queued/", usage: "[FILE...|-]",
        details: """
            Reads one record from standard input when no FILE or `-` is given. Every file is
            tried; any refusal exits 65. A FILE that starts with `-` goes after `--`.
            """,
        operands: .files, example: "some-exporter | courier enqueue -",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        var sources = try arguments.positionals()
        if sources.isEmpty { sources = ["-"] }
        let configuration = try invocation.configuration(readingSecrets: false)
        let inbox = try invocation.openInbox(configuration)
        // A producer (courier init --group) may open no more than the
        // inbox: the round its drop starts rewrites the metrics instead.
        defer {
            if let session = try? invocation.openSession(configuration) {
                invocation.refreshMetrics(configuration, session: session)
            }
        }
        var enqueuer = Enqueuer(inbox: inbox, configuration: configuration)
        var failed = false
        for source in sources {
            let bytes: [UInt8]
            if source == "-" {
                bytes = Array(FileHandle.standardInput.readDataToEndOfFile().prefix(configuration.maxRecordSize + 1))
            } else {
                guard let data = FileManager.default.contents(atPath: source) else {
                    invocation.output.error("error: unable to read \(source)")
                    failed = true
                    continue
                }
                bytes = Array(data)
            }
            do {
                let name = try enqueuer.enqueue(bytes, source: source == "-" ? "standard input" : source)
                invocation.output.line("queued \(source) as queued/\(name)")
            } catch {
                invocation.output.error("error: \(error)")
                failed = true
            }
        }
        if failed { throw .reported(.dataError) }
    }
}
