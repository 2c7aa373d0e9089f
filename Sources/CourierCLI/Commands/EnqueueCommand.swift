import CourierOperations
import CourierSpool

/// `courier enqueue [FILE...|-]`: validate records and drop them atomically.
enum EnqueueCommand {
    static let command = Command(
        "enqueue", summary: "validate records and drop them atomically into queued/", usage: "[FILE...|-]",
        details: """
            Reads one record from standard input when no FILE or `-` is given. Every file is
            tried. Exit 65: a record refused; 66: a FILE missing or unreadable; 73: the spool
            cannot take it (missing, read-only); 77: permission denied; 75: try again later.
            A FILE that starts with `-` goes after `--`.
            """,
        operands: .files, example: "some-exporter | courier enqueue -",
        run: { operands, invocation throws(CLIError) in try run(operands, invocation) })

    static func run(_ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        var sources = operands.words
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
        var failures = EnqueueFailures()
        for source in sources {
            let bytes: [UInt8]
            // One byte past the limit is enough to refuse a record as too large.
            let limit = configuration.maxRecordSize + 1
            let read = source == "-" ? InputFile.readStandardInput(upTo: limit) : InputFile.read(source, upTo: limit)
            switch read {
            case .success(let read): bytes = read
            case .failure(let problem):
                invocation.output.error("error: \(problem)")
                failures.note(.noInput)
                continue
            }
            do {
                let name = try enqueuer.enqueue(bytes, source: source == "-" ? "standard input" : source)
                invocation.output.line("queued \(source) as queued/\(name)")
            } catch {
                invocation.output.error("error: \(error)")
                switch error {
                case .invalid: failures.note(.dataError)
                case .spool(let fault): failures.note(ExitStatus(enqueueing: fault))
                }
            }
        }
        if let status = failures.status { throw .reported(status) }
    }
}

/// The exit status of an enqueue that failed for some of its files: the
/// spool's fault first (every later file meets it too, and a script must
/// fix it, not the records), then a missing input file, then bad data.
struct EnqueueFailures {
    private(set) var status: ExitStatus?

    mutating func note(_ failure: ExitStatus) {
        guard let status else {
            self.status = failure
            return
        }
        if Self.rank(failure) > Self.rank(status) { self.status = failure }
    }

    private static func rank(_ status: ExitStatus) -> Int {
        switch status {
        case .dataError: return 0
        case .noInput: return 1
        default: return 2
        }
    }
}
