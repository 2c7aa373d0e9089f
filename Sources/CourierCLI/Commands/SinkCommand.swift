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
        options: Options.fields,
        example: "courier sink --listen 127.0.0.1:8080 --dir /tmp/sink",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var listen: Address?
        var directory: String?
        var secretFile: String?
        var catalogs: String?
        var pageCursor: PageCursorName?
        var requestLog: String?
        var maxConnections: Int?
        var oauth: OAuthClient?
        var oauthLifetime: Duration?

        static let fields: [OptionField<Options>] = [
            .value(
                "--listen", "HOST:PORT", "the address to listen on (port 0: any free one)", \.listen,
                expected: "not HOST:PORT", read: Address.init),
            .value("--dir", "DIR", "where received records are stored", \.directory, completion: .directories),
            .value(
                "--signing-secret-file", "FILE", "refuse requests without a valid Standard Webhooks signature",
                \.secretFile, completion: .files),
            .value("--catalogs", "DIR", "serve DIR/NAME/ as catalog NAME", \.catalogs, completion: .directories),
            .value(
                "--page-cursor", "NAME", "what a delta page calls its cursor: next_cursor (the default) or nextCursor",
                \.pageCursor, completion: .words(PageCursorName.allCases.map(\.rawValue)),
                expected: "not next_cursor or nextCursor", read: PageCursorName.init(rawValue:)),
            .value(
                "--log", "FILE", "append KEY<TAB>STATUS for each record received", \.requestLog, completion: .files),
            .value(
                "--max-connections", "N", "connections served at once, 1 to 10000 (64)", \.maxConnections,
                expected: "not a number from 1 to 10000",
                read: { text in
                    // 10,000 threads is already more than a loopback receiver needs.
                    guard text.allSatisfy(\.isASCII), let count = Int(text), (1...10_000).contains(count) else {
                        return nil
                    }
                    return count
                }),
            .value(
                "--oauth", "CLIENT_ID:SECRET_FILE", "issue tokens to this client (POST /oauth/token) and want them",
                \.oauth, expected: "not CLIENT_ID:SECRET_FILE", read: OAuthClient.init),
            .value(
                "--oauth-token-lifetime", "DURATION", "how long an issued token lives (1h)", \.oauthLifetime,
                expected: "not a duration of 1s or more (e.g. 90s, 1h)",
                read: { text in Units.duration(text).flatMap { $0 >= .seconds(1) ? $0 : nil } }),
        ]
    }

    /// `--listen HOST:PORT`: the port after the last colon, so an IPv6
    /// host's own colons stay in the host.
    struct Address: Sendable {
        let host: String
        let port: UInt16

        init?(_ text: String) {
            guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
                return nil
            }
            host = String(text[..<colon])
            self.port = port
        }
    }

    /// `--oauth CLIENT_ID:SECRET_FILE`: the id up to the first `:`.
    struct OAuthClient: Sendable {
        let clientID: String
        let secretFile: String

        init?(_ text: String) {
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex,
                text.index(after: colon) != text.endIndex
            else { return nil }
            clientID = String(text[..<colon])
            secretFile = String(text[text.index(after: colon)...])
        }
    }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        guard let listen = options.listen, let directory = options.directory else {
            throw .usage("sink --listen HOST:PORT --dir DIR")
        }
        let secretFile = options.secretFile
        var limits = HTTPServerLimits()
        if let count = options.maxConnections { limits.maxConnections = count }
        let oauth = try oauth(options)
        try operands.none(for: "sink")
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
                directory: directory, signingSecret: secret, catalogs: options.catalogs,
                pageCursor: options.pageCursor ?? .snakeCase, requestLog: options.requestLog, oauth: oauth)
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
            server = try HTTPServer(host: listen.host, port: listen.port, limits: limits, handler: sink.handle)
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

    /// `--oauth CLIENT_ID:SECRET_FILE` and `--oauth-token-lifetime
    /// DURATION` (1h): the sink as an OAuth 2.0 token endpoint for that one
    /// client.
    private static func oauth(_ options: Options) throws(CLIError) -> SinkOAuth? {
        guard let client = options.oauth else {
            if options.oauthLifetime != nil {
                throw .usage("--oauth-token-lifetime needs --oauth CLIENT_ID:SECRET_FILE")
            }
            return nil
        }
        let lifetime = options.oauthLifetime ?? SinkOAuth.defaultLifetime
        let file = client.secretFile
        let secret: String
        do { secret = try String(contentsOfFile: file, encoding: .utf8).trimmingSpaces } catch {
            throw .io("unable to read \(file): \(error.localizedDescription)")
        }
        guard !secret.isEmpty, secret.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .data("\(file): the client secret must be one line of printable ASCII")
        }
        return SinkOAuth(clientID: client.clientID, secret: secret, lifetime: lifetime)
    }
}
