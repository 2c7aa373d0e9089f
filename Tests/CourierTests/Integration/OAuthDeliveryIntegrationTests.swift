import Foundation
import Glibc
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// OAuth 2.0 client credentials in a round, against `OAuthTestServer`
/// (RFC 6749's and RFC 6750's examples): fetched when needed, kept in
/// `.courier/` mode 0600, fetched anew before it expires and once after a
/// 401, and never written down.
@Suite(.tags(.integration)) struct OAuthDeliveryTests {
    static func setUp(secret: String = OAuthTestServer.clientSecret, scope: String? = nil) throws -> (
        TemporarySpool, OAuthTestServer
    ) {
        let spool = try TemporarySpool()
        let server = try OAuthTestServer(directory: spool.directory)
        var alpha = try TemporarySpool.subscriber("alpha", url: server.hookURL)
        alpha.oauth = OAuthClient(
            tokenURL: server.tokenURL, clientID: OAuthTestServer.clientID, secret: secret, scope: scope)
        spool.configuration.subscribers = [alpha]
        spool.companions.append(server)
        return (spool, server)
    }

    static func cache(_ spool: TemporarySpool) -> String { spool.path + "/.courier/oauth-subscriber-alpha.json" }

    /// Every byte courier wrote to the ledger, which must hold no token.
    static func expectNoToken(in spool: TemporarySpool, _ server: OAuthTestServer) throws {
        let ledger = try spool.ledgerText()
        for token in server.issued { #expect(!ledger.contains(token), "token \(token) in the ledger") }
    }

    @Test("the token request is RFC 6749 §4.4.2's, and the record goes with the token of §4.4.3 as Bearer")
    func theTokenRequestIsTheRFCs() throws {
        let (spool, server) = try Self.setUp(scope: "records:write devices")
        try spool.dropRecord(id: "s-1")
        let summary = try spool.runRound()

        #expect(summary.sent == 1)
        let token = try #require(server.tokenRequests.first)
        #expect(token.method == "POST")
        #expect(token.header("authorization") == OAuthTestServer.basicAuthorization)
        #expect(token.header("content-type") == "application/x-www-form-urlencoded")
        #expect(
            String(decoding: token.body, as: UTF8.self) == "grant_type=client_credentials&scope=records%3Awrite+devices"
        )
        #expect(server.resourceRequests.map { $0.header("authorization") } == ["Bearer 2YotnFZFEjr1zCsicMWpAA"])
        try Self.expectNoToken(in: spool, server)
    }

    @Test("a token is fetched once and reused by later rounds from .courier/, where it is kept with mode 0600")
    func theTokenIsKeptAndReused() throws {
        let (spool, server) = try Self.setUp()
        for round in 1...3 {
            try spool.dropRecord(id: "r-\(round)")
            #expect(try spool.runRound().sent == 1)
        }
        #expect(server.tokenRequests.count == 1)
        #expect(Set(server.resourceRequests.map { $0.header("authorization") }) == ["Bearer 2YotnFZFEjr1zCsicMWpAA"])
        var info = stat()
        #expect(stat(Self.cache(spool), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let kept = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.cache(spool))))
                as? [String: Any])
        #expect(kept["access_token"] as? String == "2YotnFZFEjr1zCsicMWpAA")
        let obtained = try #require((kept["obtained"] as? String).flatMap(Timestamp.init(rfc3339:)))
        let expires = try #require((kept["expires"] as? String).flatMap(Timestamp.init(rfc3339:)))
        #expect(expires - obtained == .seconds(3600))
        try Self.expectNoToken(in: spool, server)
    }

    @Test("a kept token within a minute of its expiry is fetched anew before anything is sent with it")
    func aTokenAboutToExpireIsReplaced() throws {
        let (spool, server) = try Self.setUp()
        try spool.dropRecord(id: "first")
        #expect(try spool.runRound().sent == 1)
        // The kept token now has 30 s left of its hour.
        let now = Timestamp.now()
        let kept = """
            {"access_token":"2YotnFZFEjr1zCsicMWpAA","client_id":"s6BhdRkqt3","expires":"\((now + .seconds(30)).rfc3339)",\
            "obtained":"\((now - .seconds(3570)).rfc3339)","token_url":"\(server.tokenURL)"}
            """
        try Data(kept.utf8).write(to: URL(fileURLWithPath: Self.cache(spool)))
        try spool.dropRecord(id: "second")
        #expect(try spool.runRound().sent == 1)

        #expect(server.tokenRequests.count == 2)
        #expect(server.resourceRequests.last?.header("authorization") == "Bearer tGzv3JOkF0XG5Qx2TlKWIA")
    }

    @Test("a 401 fetches a new token once and sends the item again in the same round, where it is sent")
    func aRefusedTokenIsReplacedOnce() throws {
        let (spool, server) = try Self.setUp()
        try spool.dropRecord(id: "before")
        #expect(try spool.runRound().sent == 1)
        // The server revokes the token courier keeps.
        server.revoke("2YotnFZFEjr1zCsicMWpAA")
        try spool.dropRecord(id: "after")
        let summary = try spool.runRound()

        #expect(summary.sent == 1 && summary.needsAttention == 0 && summary.retries == 1)
        #expect(try spool.names(in: .sent) == ["after@alpha.json", "before@alpha.json"])
        #expect(server.tokenRequests.count == 2)
        #expect(
            server.resourceRequests.suffix(2).map { $0.header("authorization") } == [
                "Bearer 2YotnFZFEjr1zCsicMWpAA", "Bearer tGzv3JOkF0XG5Qx2TlKWIA",
            ])
        let lines = try spool.ledger().filter { $0.key == "after" }
        #expect(lines.map(\.event) == [.accepted, .retry, .sent])
        #expect(lines.map(\.status) == [0, 401, 201])
        #expect(lines.map(\.attempt) == [0, 1, 2])
        // The server's 401 repeated the token: the ledger has it redacted.
        #expect(lines[1].detail.contains("The access token [redacted] expired"))
        try Self.expectNoToken(in: spool, server)
    }

    @Test("a server that refuses every token costs one new token, then the items need attention: no loop")
    func aPersistentRefusalIsNotALoop() throws {
        let (spool, server) = try Self.setUp()
        server.state.withLock { $0.refuseEveryToken = true }
        for id in ["a", "b", "c"] { try spool.dropRecord(id: id) }
        let summary = try spool.runRound(.foreground)

        #expect(summary.needsAttention == 3 && summary.sent == 0)
        #expect(server.tokenRequests.count == 2)
        #expect(server.resourceRequests.count == 6, "each item twice: once with each token")
        #expect(try spool.names(in: .needsAttention) == ["a@alpha.json", "b@alpha.json", "c@alpha.json"])
        let events = try spool.ledger().filter { $0.event != .accepted }
        #expect(events.filter { $0.event == .retry }.count == 3)
        #expect(events.filter { $0.event == .needsAttention }.allSatisfy { $0.status == 401 })
        try Self.expectNoToken(in: spool, server)
    }

    @Test("a token endpoint that refuses the client leaves the entries in queued/ and names subscriber and URL")
    func noTokenLeavesEntriesQueued() throws {
        let (spool, server) = try Self.setUp(secret: "not-the-secret")
        let beta = try TemporarySpool.subscriber("beta", url: server.base + "/plain")
        spool.configuration.subscribers.append(beta)
        try spool.dropRecord(id: "x")
        try spool.dropRecord(id: "y")
        let summary = try spool.runRound()

        let error = try #require(summary.tokenErrors?["alpha"])
        #expect(error.hasPrefix("no OAuth token from \(server.tokenURL): HTTP 401: invalid_client"))
        #expect(error.hasSuffix("2 entries left in queued/ for the next round"))
        #expect(!error.contains("not-the-secret"))
        #expect(try spool.names(in: .queued) == ["x@alpha.json", "y@alpha.json"])
        #expect(server.tokenRequests.count == 1, "one try per round")
        // beta has no OAuth: the resource server refuses it, and only it.
        #expect(try spool.names(in: .needsAttention) == ["x@beta.json", "y@beta.json"])

        // With the right secret the next round sends them.
        spool.configuration.subscribers[0].oauth = OAuthClient(
            tokenURL: server.tokenURL, clientID: OAuthTestServer.clientID, secret: OAuthTestServer.clientSecret)
        let next = try spool.runRound()
        #expect(next.tokenErrors == nil)
        #expect(try spool.names(in: .sent) == ["x@alpha.json", "y@alpha.json"])
    }

    @Test("a token endpoint that is down is a failure of the token, not of the items")
    func aTokenEndpointOutage() throws {
        let (spool, server) = try Self.setUp()
        server.state.withLock { $0.tokenEndpointStatus = 503 }
        try spool.dropRecord(id: "z")
        let summary = try spool.runRound(.foreground)
        #expect(summary.tokenErrors?["alpha"]?.contains("HTTP 503: temporarily_unavailable") == true)
        #expect(try spool.names(in: .queued) == ["z@alpha.json"])
        #expect(try spool.ledger().map(\.event) == [.accepted])
    }

    @Test("a catalog sync carries its token on every page and fetches a new one once after a 401")
    func catalogsUseOAuthToo() throws {
        let directory = TemporaryDirectory("oauth-catalog")
        let catalogs = try CatalogTests.makeCatalog(in: directory, count: 30)
        let server = try OAuthTestServer(directory: directory, catalogs: catalogs)
        let spool = try TemporarySpool()
        var catalog = Catalog(
            name: try TemporarySpool.subscriberName("products"), url: server.base + "/catalogs/products", pageSize: 10,
            ackURL: server.base + "/sync/ack")
        catalog.oauth = OAuthClient(
            tokenURL: server.tokenURL, clientID: OAuthTestServer.clientID, secret: OAuthTestServer.clientSecret)
        spool.configuration.catalogs = [catalog]
        let sync = {
            try CatalogSync(session: spool.session, configuration: spool.configuration, catalog: catalog).run(
                full: false)
        }

        #expect(try sync().upserts == 30)
        #expect(server.tokenRequests.count == 1)
        #expect(server.resourceRequests.allSatisfy { $0.header("authorization") == "Bearer 2YotnFZFEjr1zCsicMWpAA" })
        var info = stat()
        #expect(stat(spool.path + "/.courier/oauth-catalog-products.json", &info) == 0 && info.st_mode & 0o777 == 0o600)

        server.revoke("2YotnFZFEjr1zCsicMWpAA")
        let before = server.resourceRequests.count
        #expect(try sync().pages == 1)
        #expect(server.tokenRequests.count == 2)
        #expect(
            server.resourceRequests.dropFirst(before).map { $0.header("authorization") } == [
                "Bearer 2YotnFZFEjr1zCsicMWpAA", "Bearer tGzv3JOkF0XG5Qx2TlKWIA", "Bearer tGzv3JOkF0XG5Qx2TlKWIA",
            ])
        try OAuthDeliveryTests.expectNoToken(in: spool, server)
    }

    @Test("a catalog whose token endpoint refuses it fails the sync naming the catalog and the token URL")
    func catalogWithoutAToken() throws {
        let directory = TemporaryDirectory("oauth-catalog")
        let server = try OAuthTestServer(directory: directory)
        let spool = try TemporarySpool()
        var catalog = Catalog(
            name: try TemporarySpool.subscriberName("products"), url: server.base + "/catalogs/products")
        catalog.oauth = OAuthClient(tokenURL: server.tokenURL, clientID: "someone-else", secret: "wrong")
        spool.configuration.catalogs = [catalog]
        #expect {
            _ = try CatalogSync(session: spool.session, configuration: spool.configuration, catalog: catalog).run(
                full: false)
        } throws: { error in
            "\(error)".hasPrefix("catalog products: ")
                && "\(error)".contains("no OAuth token from \(server.tokenURL): HTTP 401: invalid_client")
        }
        #expect(server.resourceRequests.isEmpty)
    }
}

/// OAuth with batches and with catalogs whose server refuses every token.
@Suite(.tags(.integration)) struct OAuthRefusalTests {
    @Test("a batch answered 401 goes again whole, with a new token")
    func aBatchGoesAgainWhole() throws {
        let spool = try TemporarySpool()
        let server = try OAuthTestServer(directory: spool.directory)
        spool.companions.append(server)
        var outbox = try TemporarySpool.subscriber("outbox", url: server.base + "/transactions/batch")
        outbox.mode = .batch
        outbox.batch = BatchSettings(size: 10)
        outbox.oauth = OAuthClient(
            tokenURL: server.tokenURL, clientID: OAuthTestServer.clientID, secret: OAuthTestServer.clientSecret)
        spool.configuration.subscribers = [outbox]
        try spool.dropRecord(id: "warm-up")
        #expect(try spool.runRound().sent == 1)
        server.revoke("2YotnFZFEjr1zCsicMWpAA")
        for index in 0..<4 { try spool.dropRecord(id: "o-\(index)") }
        let summary = try spool.runRound()

        #expect(summary.sent == 4 && summary.retries == 4)
        #expect(server.tokenRequests.count == 2)
        let batches = server.resourceRequests.suffix(2)
        #expect(
            batches.map { $0.header("authorization") } == [
                "Bearer 2YotnFZFEjr1zCsicMWpAA", "Bearer tGzv3JOkF0XG5Qx2TlKWIA",
            ])
        #expect(batches.map { BatchTests.keys(of: $0).count } == [4, 4])
        try OAuthDeliveryTests.expectNoToken(in: spool, server)
    }

    @Test("a catalog whose server refuses every token fails once per sync, and no token is kept in its state or error")
    func aCatalogRefusedEveryToken() throws {
        let directory = TemporaryDirectory("oauth-catalog")
        let catalogs = try CatalogTests.makeCatalog(in: directory, count: 3)
        let server = try OAuthTestServer(directory: directory, catalogs: catalogs)
        server.state.withLock { $0.refuseEveryToken = true }
        let spool = try TemporarySpool()
        var catalog = Catalog(
            name: try TemporarySpool.subscriberName("products"), url: server.base + "/catalogs/products")
        catalog.oauth = OAuthClient(
            tokenURL: server.tokenURL, clientID: OAuthTestServer.clientID, secret: OAuthTestServer.clientSecret)
        spool.configuration.catalogs = [catalog]
        var message = ""
        #expect {
            _ = try CatalogSync(session: spool.session, configuration: spool.configuration, catalog: catalog).run(
                full: false)
        } throws: { error in
            message = "\(error)"
            return message.contains("answered HTTP 401")
        }
        #expect(server.tokenRequests.count == 2)
        #expect(server.resourceRequests.count == 2)
        #expect(message.contains("The access token [redacted] expired"))
        let state = try String(contentsOfFile: spool.path + "/.courier/catalog-products.json", encoding: .utf8)
        for token in server.issued {
            #expect(!message.contains(token))
            #expect(!state.contains(token))
        }
        try OAuthDeliveryTests.expectNoToken(in: spool, server)
    }
}

/// A batch server whose results repeat the bearer token, padded so that
/// the ledger's cut of a field would fall inside it.
@Suite(.tags(.integration)) struct OAuthBatchEchoTests {
    @Test("a batch result that repeats the token has it redacted before its fields are cut short")
    func echoedTokensAreRedactedBeforeTheCut() throws {
        let spool = try TemporarySpool()
        let state = Locked(OAuthTestServer.State())
        let server = try LoopbackServer { request, _ in
            if request.path == "/token" { return .respond(OAuthTestServer.token(request, state: state)) }
            let token = String((request.header("authorization") ?? "").dropFirst("Bearer ".count))
            let results = BatchTests.keys(of: request).map { key in
                #"{"idempotency_key":"\#(key)","status":"OK","server_id":"\#(String(repeating: "s", count: 50))\#(token)"}"#
            }
            return .respond(HTTPResponse.json(200, #"{"results":[\#(results.joined(separator: ","))]}"#))
        }
        spool.companions.append(server)
        var outbox = try TemporarySpool.subscriber("outbox", url: "http://\(server.server.address)/batch")
        outbox.mode = .batch
        outbox.oauth = OAuthClient(
            tokenURL: "http://\(server.server.address)/token", clientID: OAuthTestServer.clientID,
            secret: OAuthTestServer.clientSecret)
        spool.configuration.subscribers = [outbox]
        try spool.dropRecord(id: "b-1")
        #expect(try spool.runRound().sent == 1)

        let ledger = try spool.ledgerText()
        #expect(ledger.contains("server_id=\(String(repeating: "s", count: 50))[redacted]"))
        // Not even the token's first half is left.
        #expect(!ledger.contains("2YotnFZFEjr"))
    }
}

/// Intake on a shared spool holds `.courier/serial.lock` for every worker;
/// nothing that waits on the network may happen while it does.
@Suite(.tags(.integration)) struct OAuthSerialLockTests {
    @Test("on a shared spool the OAuth token is fetched before intake takes the serial lock, never under it")
    func theTokenIsFetchedOutsideTheSerialLock() throws {
        let spool = try TemporarySpool()
        let lockPath = spool.path + "/.courier/serial.lock"
        let heldDuringFetch = Locked<[Bool]>([])
        let state = Locked(OAuthTestServer.State())
        let sink = try Sink(directory: spool.directory.path + "/resource")
        let server = try LoopbackServer { request, _ in
            guard request.path == "/token" else {
                return .respond(OAuthTestServer.resource(request, state: state, sink: sink))
            }
            // Another worker's attempt at the lock, made while courier waits for this answer.
            let fd = open(lockPath, O_RDWR | O_CREAT, 0o640)
            let taken = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0
            if fd >= 0 { close(fd) }
            heldDuringFetch.withLock { $0.append(!taken) }
            return .respond(OAuthTestServer.token(request, state: state))
        }
        var alpha = try TemporarySpool.subscriber("alpha", url: "http://\(server.server.address)/hook")
        alpha.oauth = OAuthClient(
            tokenURL: "http://\(server.server.address)/token", clientID: OAuthTestServer.clientID,
            secret: OAuthTestServer.clientSecret, scope: nil)
        spool.configuration.subscribers = [alpha]
        try spool.dropRecord(id: "s-1")
        let summary = try SharedSpoolTests.round(spool, worker: "w1")
        #expect(summary.sent == 1)
        #expect(heldDuringFetch.withLock { $0 } == [false], "\(heldDuringFetch.withLock { $0 })")
    }
}
