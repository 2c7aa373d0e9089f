import CourierSink
import CourierSupport
import Foundation
import Glibc

/// `courier sink --listen ADDR --dir DIR [--signing-secret-file FILE] [--catalogs DIR] [--log FILE]
/// [--max-connections N]`:
/// the reference receiver, in the foreground until SIGINT or SIGTERM.
enum SinkCommand {
    static let command = Command(
        "sink", summary: "the reference receiver: one record per key, batches, catalog deltas",
        usage:
            "--listen HOST:PORT --dir DIR [--signing-secret-file FILE] [--catalogs DIR] [--log FILE] "
            + "[--max-connections N]",
        details: """
            Stores each record once per key in DIR/new/KEY.json, answers batches, serves
            catalog deltas; past N (64) connections it answers 503. Runs until SIGINT or SIGTERM.
            """,
        options: [
            .value("--listen", "HOST:PORT", "the address to listen on (port 0: any free one)"),
            .value("--dir", "DIR", "where received records are stored", completion: .directories),
            .value(
                "--signing-secret-file", "FILE", "refuse requests without a valid Standard Webhooks signature",
                completion: .files),
            .value("--catalogs", "DIR", "serve DIR/NAME/ as catalog NAME", completion: .directories),
            .value("--log", "FILE", "append KEY<TAB>STATUS for each record received", completion: .files),
            .value("--max-connections", "N", "connections served at once, 1 to 10000 (64)"),
        ],
        example: "courier sink --listen 127.0.0.1:8080 --dir /tmp/sink",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        guard let listen = try arguments.option("--listen") else { throw .usage("sink --listen HOST:PORT --dir DIR") }
        guard let directory = try arguments.option("--dir") else { throw .usage("sink --listen HOST:PORT --dir DIR") }
        let secretFile = try arguments.option("--signing-secret-file")
        let catalogs = try arguments.option("--catalogs")
        let requestLog = try arguments.option("--log")
        var limits = HTTPServerLimits()
        if let text = try arguments.option("--max-connections") {
            // 10,000 threads is already more than a loopback receiver needs.
            guard text.allSatisfy(\.isASCII), let count = Int(text), (1...10_000).contains(count) else {
                throw .usage("--max-connections \(text) is not a number from 1 to 10000")
            }
            limits.maxConnections = count
        }
        try arguments.noPositionals("sink")
        guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
            throw .usage("--listen \(listen) is not HOST:PORT")
        }
        var secret: [UInt8]?
        if let secretFile {
            let text: String
            do { text = try String(contentsOfFile: secretFile, encoding: .utf8) } catch {
                throw .io("unable to read \(secretFile): \(error.localizedDescription)")
            }
            guard let decoded = WebhookSigner.decodeSecret(text.trimmingSpaces) else {
                throw .data("\(secretFile): expected `whsec_` followed by base64")
            }
            secret = decoded
        }
        let sink: Sink
        do {
            sink = try Sink(directory: directory, signingSecret: secret, catalogs: catalogs, requestLog: requestLog)
        } catch {
            throw .spool(error)
        }
        // Block the stop signals in every thread, then wait for them here:
        // no handler, no global state.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        let server: HTTPServer
        do {
            server = try HTTPServer(host: String(listen[..<colon]), port: port, limits: limits, handler: sink.handle)
        } catch {
            throw .io(error.description)
        }
        server.start()
        invocation.output.error("sink listening on \(server.address), storing into \(directory)/new")
        var received: Int32 = 0
        sigwait(&signals, &received)
        server.stop()
    }
}
