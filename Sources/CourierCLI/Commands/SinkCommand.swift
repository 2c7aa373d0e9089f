import CourierSink
import CourierSpool
import CourierSupport
import Foundation
import Glibc

/// `courier sink --listen ADDR --dir DIR [--signing-secret-file FILE] [--catalogs DIR [--page-cursor NAME]] [--log FILE]
/// [--max-connections N] [--oauth CLIENT_ID:SECRET_FILE [--oauth-token-lifetime DURATION]]`:
/// the reference receiver, in the foreground until SIGINT or SIGTERM.
enum SinkCommand {
    static let command = Command(
        "sink", summary: "the reference receiver: one record per key, batches, catalog deltas",
        usage:
            "--listen HOST:PORT --dir DIR [--signing-secret-file FILE] [--catalogs DIR [--page-cursor NAME]] "
            + "[--log FILE] "
            + "[--max-connections N] [--oauth CLIENT_ID:SECRET_FILE [--oauth-token-lifetime DURATION]]",
        details: """
            Stores each record once per key in DIR/new/KEY.json, answers batches, serves
            catalog deltas; past N (64) connections it answers 503. With --oauth it is the
            token endpoint of that one client (POST /oauth/token, client credentials) and
            wants one of its tokens on every other request (401 otherwise). Runs until
            SIGINT or SIGTERM.
            """,
        options: [
            .value("--listen", "HOST:PORT", "the address to listen on (port 0: any free one)"),
            .value("--dir", "DIR", "where received records are stored", completion: .directories),
            .value(
                "--signing-secret-file", "FILE", "refuse requests without a valid Standard Webhooks signature",
                completion: .files),
            .value("--catalogs", "DIR", "serve DIR/NAME/ as catalog NAME", completion: .directories),
            .value(
                "--page-cursor", "NAME", "what a delta page calls its cursor: next_cursor (the default) or nextCursor",
                completion: .words(PageCursorName.allCases.map(\.rawValue))),
            .value("--log", "FILE", "append KEY<TAB>STATUS for each record received", completion: .files),
            .value("--max-connections", "N", "connections served at once, 1 to 10000 (64)"),
            .value(
                "--oauth", "CLIENT_ID:SECRET_FILE",
                "issue tokens to this client (POST /oauth/token) and want them"),
            .value("--oauth-token-lifetime", "DURATION", "how long an issued token lives (1h)"),
        ],
        example: "courier sink --listen 127.0.0.1:8080 --dir /tmp/sink",
        run: { arguments, invocation throws(CLIError) in try run(&arguments, invocation) })

    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        guard let listen = try arguments.option("--listen") else { throw .usage("sink --listen HOST:PORT --dir DIR") }
        guard let directory = try arguments.option("--dir") else { throw .usage("sink --listen HOST:PORT --dir DIR") }
        let secretFile = try arguments.option("--signing-secret-file")
        let catalogs = try arguments.option("--catalogs")
        var pageCursor = PageCursorName.snakeCase
        if let text = try arguments.option("--page-cursor") {
            guard let name = PageCursorName(rawValue: text) else {
                throw .usage("--page-cursor \(text) is not next_cursor or nextCursor")
            }
            pageCursor = name
        }
        let requestLog = try arguments.option("--log")
        var limits = HTTPServerLimits()
        if let text = try arguments.option("--max-connections") {
            // 10,000 threads is already more than a loopback receiver needs.
            guard text.allSatisfy(\.isASCII), let count = Int(text), (1...10_000).contains(count) else {
                throw .usage("--max-connections \(text) is not a number from 1 to 10000")
            }
            limits.maxConnections = count
        }
        let oauth = try oauthOption(&arguments)
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
            sink = try Sink(
                directory: directory, signingSecret: secret, catalogs: catalogs, pageCursor: pageCursor,
                requestLog: requestLog, oauth: oauth)
        } catch {
            throw .spool(SpoolError(error))
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
        if let oauth {
            invocation.output.error(
                "sink issues tokens to \(oauth.clientID) at POST /oauth/token (lifetime "
                    + "\(Units.describe(oauth.lifetime))) and wants one on every other request")
        }
        var received: Int32 = 0
        sigwait(&signals, &received)
        server.stop()
    }

    /// `--oauth CLIENT_ID:SECRET_FILE` (the id up to the first `:`) and
    /// `--oauth-token-lifetime DURATION` (1h): the sink as an OAuth 2.0
    /// token endpoint for that one client.
    private static func oauthOption(_ arguments: inout Arguments) throws(CLIError) -> SinkOAuth? {
        let lifetimeText = try arguments.option("--oauth-token-lifetime")
        guard let text = try arguments.option("--oauth") else {
            if lifetimeText != nil { throw .usage("--oauth-token-lifetime needs --oauth CLIENT_ID:SECRET_FILE") }
            return nil
        }
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text.index(after: colon) != text.endIndex
        else { throw .usage("--oauth \(text) is not CLIENT_ID:SECRET_FILE") }
        var lifetime = SinkOAuth.defaultLifetime
        if let lifetimeText {
            guard let parsed = Units.duration(lifetimeText), parsed >= .seconds(1) else {
                throw .usage("--oauth-token-lifetime \(lifetimeText) is not a duration of 1s or more (e.g. 90s, 1h)")
            }
            lifetime = parsed
        }
        let file = String(text[text.index(after: colon)...])
        let secret: String
        do { secret = try String(contentsOfFile: file, encoding: .utf8).trimmingSpaces } catch {
            throw .io("unable to read \(file): \(error.localizedDescription)")
        }
        guard !secret.isEmpty, secret.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .data("\(file): the client secret must be one line of printable ASCII")
        }
        return SinkOAuth(clientID: String(text[..<colon]), secret: secret, lifetime: lifetime)
    }
}
