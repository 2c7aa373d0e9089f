import Foundation
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierSupport

/// OAuth 2.0 between two real processes: `courier` with `oauth-*` keys and
/// `courier sink --oauth`, which issues the tokens and wants them.
@Suite(.serialized, .tags(.integration)) struct OAuthEndToEndTests {
    static let secret = OAuthTestServer.clientSecret

    /// A sink with `--oauth`, restartable on its port.
    final class OAuthSink {
        let binary: CourierBinary
        let directory: TemporaryDirectory
        let extra: [String]
        private(set) var process: Process
        let port: UInt16
        private var starts = 1

        init(_ binary: CourierBinary, _ directory: TemporaryDirectory, extra: [String] = [], name: String = "sink")
            throws
        {
            try directory.write(OAuthEndToEndTests.secret + "\n", to: "\(name).secret")
            self.binary = binary
            self.directory = directory
            self.extra =
                [
                    "--dir", directory.path + "/\(name)", "--log", directory.path + "/\(name).log",
                    "--oauth", "\(OAuthTestServer.clientID):\(directory.path)/\(name).secret",
                ] + extra
            (process, port) = try binary.startSink(self.extra, errors: directory.path + "/\(name).err")
        }

        /// A restarted sink has a new key: the tokens it issued before are refused.
        func restart() throws {
            stop()
            starts += 1
            (process, _) = try binary.startSink(extra, errors: directory.path + "/sink-\(starts).err", port: port)
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }

        deinit { stop() }

        var base: String { "http://127.0.0.1:\(port)" }

        /// `--log`: `KEY<TAB>STATUS` per record, `/oauth/token<TAB>STATUS` per token request.
        var log: [String] {
            let path = directory.path + "/" + (extra[3] as NSString).lastPathComponent
            return ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    static func configure(
        _ directory: TemporaryDirectory, url: String, tokenURL: String, secretFile: String = "courier.secret",
        extra: String = ""
    ) throws -> String {
        if !FileManager.default.fileExists(atPath: directory.path + "/courier.secret") {
            try directory.write(secret + "\n", to: "courier.secret")
            chmod(directory.path + "/courier.secret", 0o600)
        }
        try directory.write(
            """
            [courier]
            spool = spool
            settle = 0s

            [subscriber alpha]
            url = \(url)/records
            oauth-token-url = \(tokenURL)
            oauth-client-id = \(OAuthTestServer.clientID)
            oauth-client-secret-file = \(secretFile)
            oauth-scope = records:write
            \(extra)
            """, to: "courier.conf")
        return directory.path + "/courier.conf"
    }

    static func drop(_ directory: TemporaryDirectory, _ ids: [String]) throws {
        for id in ids { try directory.write(#"{"id":"\#(id)","kind":"sleep"}"#, to: "spool/queued/\(id).json") }
    }

    /// The token kept in the spool, read as a person would.
    static func keptToken(_ directory: TemporaryDirectory, _ file: String = "oauth-subscriber-alpha.json") throws
        -> String
    {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/spool/.courier/" + file))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard let token = object?["access_token"] as? String else { throw TestFailure("no token in \(file)") }
        return token
    }

    static func mode(of path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    /// Everything courier wrote down: the ledger files.
    static func ledger(_ directory: TemporaryDirectory) throws -> String {
        let folder = directory.path + "/spool/ledger"
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            .map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }.joined()
    }

    @Test("one token across rounds, a new one once the sink restarts, and never in the ledger or the output")
    func tokensAreFetchedKeptAndReplaced() throws {
        let directory = TemporaryDirectory("oauth-e2e")
        let binary = try CourierBinary.locate()
        let catalogs = try CatalogTests.makeCatalog(in: directory, count: 25)
        let sink = try OAuthSink(binary, directory, extra: ["--catalogs", catalogs])
        let config = try Self.configure(
            directory, url: sink.base, tokenURL: sink.base + "/oauth/token",
            extra: """

                [catalog products]
                url = \(sink.base)/catalogs/products
                page-size = 10
                oauth-token-url = \(sink.base)/oauth/token
                oauth-client-id = \(OAuthTestServer.clientID)
                oauth-client-secret-file = courier.secret
                """)
        var outputs: [String] = []
        func courier(_ arguments: [String]) throws -> CourierBinary.Result {
            let result = try binary.run(["--config", config, "--verbose"] + arguments)
            outputs += [result.output, result.error]
            return result
        }
        #expect(try courier(["init"]).status == 0)
        try Self.drop(directory, ["a", "b", "c"])
        var round = try courier(["run"])
        #expect(round.status == 0, "\(round.error)")
        #expect(round.output.contains("3 sent"))
        try Self.drop(directory, ["d"])
        round = try courier(["run"])
        #expect(round.output.contains("1 sent"))
        #expect(sink.log.filter { $0.hasPrefix("/oauth/token\t") } == ["/oauth/token\t200"])
        let first = try Self.keptToken(directory)
        #expect(Self.mode(of: directory.path + "/spool/.courier/oauth-subscriber-alpha.json") == 0o600)

        // The sink restarts and forgets its tokens: the kept one gets a 401,
        // courier fetches a new one and sends the record again.
        try sink.restart()
        try Self.drop(directory, ["e"])
        round = try courier(["run"])
        #expect(round.status == 0, "\(round.error)")
        #expect(round.output.contains("1 sent, 0 need attention, 1 accepted, 1 retries"))
        #expect(sink.log.suffix(3) == ["e\t401", "/oauth/token\t200", "e\t201"])
        let second = try Self.keptToken(directory)
        #expect(second != first)

        let sync = try courier(["catalog", "sync"])
        #expect(sync.status == 0, "\(sync.error)")
        #expect(sync.output.contains("25 upserts"))
        let catalogToken = try Self.keptToken(directory, "oauth-catalog-products.json")
        #expect(Self.mode(of: directory.path + "/spool/.courier/oauth-catalog-products.json") == 0o600)

        let ledger = try Self.ledger(directory)
        #expect(ledger.contains("\talpha\te\tretry\t401\t1\t"))
        for token in [first, second, catalogToken] {
            #expect(!ledger.contains(token))
            #expect(!outputs.contains { $0.contains(token) })
            // Nor any piece of it: the signature alone would do.
            #expect(!ledger.contains(String(token.split(separator: ".").last ?? "")))
        }
        #expect(!ledger.contains(Self.secret) && !outputs.contains { $0.contains(Self.secret) })
    }

    @Test("a token of a short lifetime is fetched anew once it is about to expire")
    func shortLivedTokensAreReplaced() throws {
        let directory = TemporaryDirectory("oauth-e2e")
        let binary = try CourierBinary.locate()
        let sink = try OAuthSink(binary, directory, extra: ["--oauth-token-lifetime", "30s"])
        let config = try Self.configure(directory, url: sink.base, tokenURL: sink.base + "/oauth/token")
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        try Self.drop(directory, ["one"])
        #expect(try binary.run(["--config", config, "run"]).output.contains("1 sent"))
        // Thirty seconds pass, as far as the kept token says: obtained 30 s
        // ago, expiring in 1 s, inside its last tenth. (A real 2 s lifetime
        // raced a loaded machine: a token could expire between its fetch
        // and the POST it was for.)
        let kept = directory.path + "/spool/.courier/oauth-subscriber-alpha.json"
        var token = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: kept))) as? [String: Any])
        #expect(token["expires"] != nil && token["obtained"] != nil, "\(token)")
        let now = Timestamp.now()
        token["obtained"] = (now - .seconds(30)).rfc3339
        token["expires"] = (now + .seconds(1)).rfc3339
        try JSONSerialization.data(withJSONObject: token).write(to: URL(fileURLWithPath: kept))
        try Self.drop(directory, ["two"])
        #expect(try binary.run(["--config", config, "run"]).output.contains("1 sent"))
        #expect(sink.log == ["/oauth/token\t200", "one\t201", "/oauth/token\t200", "two\t201"])
    }

    @Test("a server that refuses every token: one new token, then the item needs attention (no loop)")
    func aPersistentRefusal() throws {
        let directory = TemporaryDirectory("oauth-e2e")
        let binary = try CourierBinary.locate()
        // Tokens come from one sink, records go to another with its own key.
        let issuer = try OAuthSink(binary, directory, name: "issuer")
        let receiver = try OAuthSink(binary, directory, name: "receiver")
        let config = try Self.configure(directory, url: receiver.base, tokenURL: issuer.base + "/oauth/token")
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        try Self.drop(directory, ["p"])
        let round = try binary.run(["--config", config, "run"])
        #expect(round.status == 0)
        #expect(round.output.contains("0 sent, 1 need attention, 1 accepted, 1 retries"))
        #expect(issuer.log == ["/oauth/token\t200", "/oauth/token\t200"])
        #expect(receiver.log == ["p\t401", "p\t401"])
        #expect(FileManager.default.fileExists(atPath: directory.path + "/spool/needsAttention/p@alpha.json"))
        let why = try binary.run(["--config", config, "why", "p"])
        #expect(why.output.contains("401"))
    }

    @Test("a refused client: the round exits 75 naming subscriber and token URL, and the entries wait in queued/")
    func aRefusedClient() throws {
        let directory = TemporaryDirectory("oauth-e2e")
        let binary = try CourierBinary.locate()
        let sink = try OAuthSink(binary, directory)
        try directory.write("not-the-secret\n", to: "wrong.secret")
        let config = try Self.configure(
            directory, url: sink.base, tokenURL: sink.base + "/oauth/token", secretFile: "wrong.secret")
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        try Self.drop(directory, ["q1", "q2"])
        let round = try binary.run(["--config", config, "run"])
        #expect(round.status == 75)
        #expect(
            round.error.contains(
                "subscriber alpha: no OAuth token from \(sink.base)/oauth/token: HTTP 401: invalid_client"))
        #expect(round.error.contains("2 entries left in queued/"))
        #expect(!round.error.contains("not-the-secret") && !round.output.contains("not-the-secret"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/queued").sorted() == [
                "q1@alpha.json", "q2@alpha.json",
            ])
        let status = try binary.run(["--config", config, "status"])
        #expect(status.output.contains("subscriber alpha got no token: no OAuth token from"))
    }

    @Test("status and check warn about a token-file whose JWT expires within a week, or has expired")
    func expiringJWTsAreWarnedAbout() throws {
        let directory = TemporaryDirectory("oauth-e2e")
        let binary = try CourierBinary.locate()
        let soon = Timestamp.now().secondsSinceEpoch + 2 * 86_400 + 3600
        try directory.write(JSONWebTokenTests.token(claims: #"{"sub":"me","exp":\#(soon)}"#), to: "beta.token")
        try directory.write(JSONWebTokenTests.rfcExample, to: "old.token")
        try directory.write("2YotnFZFEjr1zCsicMWpAA", to: "opaque.token")
        for name in ["beta.token", "old.token", "opaque.token"] { chmod(directory.path + "/" + name, 0o600) }
        try directory.write(
            """
            [courier]
            spool = spool

            [subscriber beta]
            url = http://127.0.0.1:9/x
            token-file = beta.token

            [subscriber gamma]
            url = http://127.0.0.1:9/y
            token-file = opaque.token

            [catalog old]
            url = http://127.0.0.1:9/c
            token-file = old.token
            """, to: "courier.conf")
        let config = directory.path + "/courier.conf"
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        let check = try binary.run(["--config", config, "check"])
        #expect(check.status == 0, "\(check.output)\(check.error)")
        let expected = "warning: [subscriber beta] token-file \(directory.path)/beta.token: the JWT in it expires at "
        #expect(check.output.contains(expected))
        #expect(check.output.contains("(in 2 days); replace it before then"))
        #expect(
            check.output.contains(
                "warning: [catalog old] token-file \(directory.path)/old.token: the JWT in it expired at 2011-03-22T18:43:00"
            ))
        #expect(!check.output.contains("opaque.token"))
        let status = try binary.run(["--config", config, "status"])
        #expect(status.output.contains(expected))
        let json = try binary.run(["--config", config, "status", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect((object?["tokenWarnings"] as? [String])?.count == 2)
    }

    @Test(
        "courier sink refuses an --oauth that is not CLIENT_ID:SECRET_FILE, or a lifetime under a second",
        arguments: [["--oauth", "nocolon"], ["--oauth", ":file"], ["--oauth-token-lifetime", "1h"]] as [[String]])
    func badOAuthOptions(_ options: [String]) throws {
        let directory = TemporaryDirectory("oauth-e2e")
        let result = try CourierBinary.locate().run(
            ["sink", "--listen", "127.0.0.1:1", "--dir", directory.path] + options)
        #expect(result.status == 64, "\(result.error)")
        #expect(result.error.contains("--oauth"))
    }
}
