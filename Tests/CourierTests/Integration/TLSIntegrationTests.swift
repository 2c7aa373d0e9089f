import Foundation
import Glibc
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierIdentifiers
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// TLS endpoints on loopback (certificates made with openssl, served by a
/// Python HTTPS server): a certificate that does not verify is refused, and
/// not a byte of the record goes out.
@Suite(.serialized, .tags(.integration), .needs("openssl", "python3")) struct TLSTests {
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

    /// A small Python HTTPS server with this certificate on a loopback port
    /// the kernel picks (and the script prints); it answers POSTs 201 and
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
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        sys.stdout.write("ready %d\\n" % server.server_address[1])
        sys.stdout.flush()
        server.serve_forever()
        """

    static func server(cert: String, key: String, in directory: String) throws -> (Process, UInt16) {
        try serverScript.write(toFile: directory + "/server.py", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "server.py", cert, key]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let ready = Pipe()
        process.standardOutput = ready
        process.standardError = FileHandle.nullDevice
        try process.run()
        // "ready PORT": the socket is listening, on a port no other test can have.
        var line = ""
        while !line.contains("\n") {
            let more = ready.fileHandleForReading.availableData
            if more.isEmpty { break }
            line += String(decoding: more, as: UTF8.self)
        }
        guard line.hasPrefix("ready "), let port = UInt16(String(line.dropFirst(6)).trimmingSpaces) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestFailure("the TLS server did not start: \(line)")
        }
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
        let directory = TemporaryDirectory("tls")
        try Self.certificates(in: directory.path)
        let (server, port) = try Self.server(cert: "leaf.pem", key: "leaf.key", in: directory.path)
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        let spool = try TemporarySpool(subscribers: [])
        let catalog = Catalog(
            name: try #require(SubscriberName("products")), url: "https://127.0.0.1:\(port)/catalogs/products",
            cursor: .version, caFile: trusted ? directory.path + "/ca.pem" : nil)
        spool.configuration.catalogs = [catalog]
        let sync = CatalogSync(session: spool.session, configuration: spool.configuration, catalog: catalog)
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
