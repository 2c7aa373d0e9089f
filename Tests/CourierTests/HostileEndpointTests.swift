@testable import CourierPosix
@testable import CourierSupport
@testable import CourierSpool
@testable import CourierRecords
@testable import CourierConfig
@testable import CourierTransport
@testable import CourierRound
@testable import CourierCatalog
@testable import CourierSink
@testable import CourierOperations
import Foundation
import Glibc
import Testing

/// Endpoints that misbehave: courier classifies, never hangs, never crashes,
/// and never sends a record in clear to a TLS endpoint it cannot verify.
@Suite struct HostileEndpointTests {
    static func round(
        _ behaviour: @escaping @Sendable (HTTPRequest, Int) -> HTTPServerAction, timeout: Duration = .seconds(2)
    )
        throws -> (TemporarySpool, LoopbackServer, Duration)
    {
        let server = try LoopbackServer(behaviour)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        spool.configuration.backgroundTimeout = timeout
        try spool.dropRecord(id: "h-1")
        let started = MonotonicInstant.now()
        try spool.runRound()
        return (spool, server, MonotonicInstant.now() - started)
    }

    @Test func aSlowDripAnswerTimesOut() throws {
        let (spool, _, took) = try Self.round(
            { _, _ in
                .drip(
                    Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".utf8) + [UInt8](repeating: 0x61, count: 100),
                    every: .milliseconds(50))
            }, timeout: .milliseconds(500))
        #expect(try spool.names(in: .needsAttention) == ["h-1@alpha.json"])
        #expect(try spool.ledger().last?.detail.lowercased().contains("timed out") == true)
        #expect(took < .seconds(3))
    }

    @Test func aResetMidAnswerNeedsAttention() throws {
        let (spool, _, _) = try Self.round { _, _ in .partialThenReset(Array("HTTP/1.1 200 OK\r\nContent-Le".utf8)) }
        #expect(try spool.names(in: .needsAttention) == ["h-1@alpha.json"])
        #expect(try spool.ledger().last?.status == 0)
    }

    @Test func aBodyCutShortNeedsAttention() throws {
        let (spool, _, _) = try Self.round { _, _ in
            .partialThenReset(Array("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhalf".utf8))
        }
        #expect(
            try spool.names(in: .needsAttention) == ["h-1@alpha.json"], "a 200 whose body never arrived is no delivery")
    }

    @Test(arguments: [
        "HTTP/1.1 abc OK\r\n\r\n", "HTTP/9.9 200\r\n\r\n", "\r\n\r\n", "HTTP/1.1 999999999999 X\r\n\r\n",
        "ICY 200 OK\r\n\r\n",
    ])
    func garbageStatusLinesNeedAttention(answer: String) throws {
        let (spool, _, _) = try Self.round { _, _ in .raw(Array(answer.utf8)) }
        #expect(try spool.names(in: .needsAttention) == ["h-1@alpha.json"])
    }

    @Test func tenThousandHeadersAreSurvived() throws {
        var head = "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n"
        for index in 0..<10_000 { head += "X-Header-\(index): value \(index)\r\n" }
        let answer = Array((head + "\r\n{}").utf8)
        let (spool, _, _) = try Self.round { _, _ in .raw(answer) }
        // curl caps the header block; either way the round finishes and says what happened.
        #expect(try spool.placements()["h-1@alpha.json"]?.count == 1)
        #expect(try spool.names(in: .sending).isEmpty)
    }
}

/// TLS endpoints on loopback (certificates made with openssl, served by a
/// Python HTTPS server): a certificate that does not verify is refused, and
/// not a byte of the record goes out.
@Suite(.serialized) struct TLSTests {
    /// Runs openssl; the certificates are made fresh for each test.
    static func openssl(_ arguments: [String], in directory: String) throws {
        let result = try Shell.run(["openssl"] + arguments, in: directory)
        guard result.status == 0 else { throw TestFailure("openssl \(arguments.first ?? ""): \(result.output)") }
    }

    /// A CA, a leaf for 127.0.0.1 signed by it (valid or long expired), and
    /// a self-signed leaf.
    static func certificates(in directory: String) throws {
        try openssl(
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
                "-subj", "/CN=courier test CA",
            ], in: directory)
        try openssl(
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj",
                "/CN=127.0.0.1",
            ], in: directory)
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: directory + "/san.ext", atomically: true, encoding: .utf8)
        try openssl(
            [
                "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                "leaf.pem", "-days", "30", "-extfile", "san.ext",
            ], in: directory)
        try openssl(
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "self.key", "-out", "self.pem", "-days",
                "30", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ], in: directory)
        // Expired: an openssl ca run with dates in 2020.
        try
            "[ca]\ndefault_ca=test\n[test]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\npolicy=any\ncopy_extensions=copy\n[any]\ncommonName=supplied\n"
            .write(toFile: directory + "/ca.cnf", atomically: true, encoding: .utf8)
        try "".write(toFile: directory + "/index.txt", atomically: true, encoding: .utf8)
        try "1000\n".write(toFile: directory + "/serial", atomically: true, encoding: .utf8)
        try openssl(
            [
                "ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca.key", "-in", "leaf.csr", "-out",
                "expired.pem", "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-extfile", "san.ext",
            ], in: directory)
    }

    /// A small Python HTTPS server with this certificate on a free loopback
    /// port; it answers POSTs 201 and GETs with a one-item catalog page, and
    /// appends each request's path to `received`.
    static let serverScript = """
        import http.server, ssl, sys
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with open("received", "a") as log:
                    log.write(self.path + "\\n")
                page = b'{"upserts":[{"id":"p-1","name":"one"}],"tombstones":[],"nextCursor":null,"version":7}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with open("received", "a") as log:
                    log.write(self.path + "\\n")
                self.send_response(201)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[2], sys.argv[3])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print("ready", flush=True)
        server.serve_forever()
        """

    static func server(cert: String, key: String, in directory: String) throws -> (Process, UInt16) {
        let probe = try HTTPServer { _ in .reset }
        let port = probe.port
        probe.stop()
        try serverScript.write(toFile: directory + "/server.py", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "server.py", String(port), cert, key]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let ready = Pipe()
        process.standardOutput = ready
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait for "ready": the socket is listening.
        _ = ready.fileHandleForReading.availableData
        return (process, port)
    }

    static func received(in directory: String) -> String {
        (try? String(contentsOfFile: directory + "/received", encoding: .utf8)) ?? ""
    }

    @Test(
        arguments: [
            ("self.pem", "self.key", nil, "self-signed"), ("leaf.pem", "leaf.key", nil, "local issuer"),
            ("expired.pem", "leaf.key", "ca.pem", "expired"),
        ] as [(String, String, String?, String)])
    func unverifiableCertificatesAreRefused(cert: String, key: String, caFile: String?, reason: String) throws {
        guard Shell.exists("openssl") else {
            Issue.record("openssl is missing: .ci/run installs it")
            return
        }
        let directory = TemporaryDirectory("tls")
        try Self.certificates(in: directory.path)
        let (server, port) = try Self.server(cert: cert, key: key, in: directory.path)
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        let spool = try TemporarySpool(subscribers: [
            Subscriber(
                name: SubscriberName("tls")!, url: "https://127.0.0.1:\(port)/hook",
                caFile: caFile.map { directory.path + "/" + $0 })
        ])
        spool.configuration.foregroundTimeout = .seconds(5)
        try spool.dropRecord(id: "secret-1", extra: #","data":"do not leak""#)
        try spool.runRound(.foreground)
        #expect(try spool.names(in: .needsAttention) == ["secret-1@tls.json"])
        let line = try #require(try spool.ledger().last)
        #expect(line.detail.lowercased().contains(reason), "\(line.detail)")
        #expect(try spool.ledger().filter { $0.event == .retry }.isEmpty, "a certificate fault is not retried")
        #expect(Self.received(in: directory.path).isEmpty, "the record reached a server that did not verify")
    }

    @Test func aTrustedCertificateWorks() throws {
        guard Shell.exists("openssl") else {
            Issue.record("openssl is missing: .ci/run installs it")
            return
        }
        let directory = TemporaryDirectory("tls")
        try Self.certificates(in: directory.path)
        let (server, port) = try Self.server(cert: "leaf.pem", key: "leaf.key", in: directory.path)
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        let spool = try TemporarySpool(subscribers: [
            Subscriber(
                name: SubscriberName("tls")!, url: "https://127.0.0.1:\(port)/hook", caFile: directory.path + "/ca.pem")
        ])
        try spool.dropRecord(id: "ok-1")
        try spool.runRound()
        #expect(try spool.names(in: .sent) == ["ok-1@tls.json"], "\((try? spool.ledgerText()) ?? "")")
        #expect(Self.received(in: directory.path) == "/hook\n")
    }

    /// A catalog's requests follow the same TLS rules as a subscriber's
    /// (`CurlOptions`): its own CA file is trusted, and without it the same
    /// server is refused.
    @Test(arguments: [true, false])
    func catalogsUseTheirCAFile(trusted: Bool) throws {
        guard Shell.exists("openssl") else {
            Issue.record("openssl is missing: .ci/run installs it")
            return
        }
        let directory = TemporaryDirectory("tls")
        try Self.certificates(in: directory.path)
        let (server, port) = try Self.server(cert: "leaf.pem", key: "leaf.key", in: directory.path)
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        let spool = try TemporarySpool(subscribers: [])
        let catalog = Catalog(
            name: SubscriberName("products")!, url: "https://127.0.0.1:\(port)/catalogs/products",
            caFile: trusted ? directory.path + "/ca.pem" : nil)
        spool.configuration.catalogs = [catalog]
        let sync = CatalogSync(spool: spool.spool, configuration: spool.configuration, catalog: catalog)
        if trusted {
            let report = try sync.run(full: false)
            #expect(report.version == 7)
            #expect(FileManager.default.fileExists(atPath: spool.path + "/catalogs/products/p-1.json"))
            #expect(Self.received(in: directory.path).hasPrefix("/catalogs/products/delta?"))
        } else {
            #expect(throws: (any Error).self) { try sync.run(full: false) }
            #expect(Self.received(in: directory.path).isEmpty, "a request went to a server that did not verify")
        }
    }
}
