import CourierSink
import CourierSupport
import Foundation
import Glibc

/// `courier sink --listen ADDR --dir DIR [--signing-secret-file FILE] [--catalogs DIR] [--log FILE]
/// [--max-connections N]`:
/// the reference receiver, in the foreground until SIGINT or SIGTERM.
enum SinkCommand {
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
