import Foundation
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// Values that become headers are checked once before any request is
/// built, and secrets never reach the ledger, whatever an answer echoes.
@Suite(.tags(.integration)) struct HeaderAndSecretTests {
    @Test("a record whose etag carries CR LF needs attention and nothing is sent")
    func aLineBreakInAnEtagIsNeverSentAsAHeader() throws {
        let server = try LoopbackServer(status: 201)
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: server.url)])
        spool.companions.append(server)
        let u1 = #"{"id":"u1","kind":"order","op":"UPDATE","etag":"v1\r\nIdempotency-Key: stolen"}"#
        let u2 = #"{"id":"u2","kind":"order","op":"UPDATE","version":"7\u0000"}"#
        // Dropped: intake refuses them, naming the field.
        try spool.drop(u1, as: "u1.json")
        try spool.drop(u2, as: "u2.json")
        // Already entries (resent from an older spool): the claim refuses them.
        try spool.drop(u1.replacingOccurrences(of: #""u1""#, with: #""u3""#), as: "u3@alpha.json")
        try spool.drop(u2.replacingOccurrences(of: #""u2""#, with: #""u4""#), as: "u4@alpha.json")
        try spool.dropRecord(id: "fine", kind: "order")

        try spool.runRound()

        #expect(server.requests.map { $0.header("idempotency-key") } == ["fine"])
        let attention = try spool.names(in: .needsAttention)
        #expect(attention.filter { $0.hasPrefix("invalid-") }.count == 2, "\(attention)")
        #expect(attention.filter { !$0.hasPrefix("invalid-") } == ["u3@alpha.json", "u4@alpha.json"])
        let reasons = try spool.ledger().filter { $0.event == .needsAttention || $0.event == .invalid }.map(\.detail)
        #expect(reasons.count == 4)
        #expect(
            reasons.allSatisfy { $0.contains("If-Match") && ($0.contains("`etag`") || $0.contains("`version`")) },
            "\(reasons)")
    }

    @Test(
        "a header value with a control byte cannot be made",
        arguments: ["a\rb", "a\nb", "a\u{0}b", "a\u{7F}b", "a\u{1B}b"])
    func headerFieldsRefuseControlBytes(_ value: String) {
        #expect(throws: HeaderFieldError.self) { try HTTPHeaderField(name: "X-Test", value: value) }
        #expect(throws: HeaderFieldError.self) { try HTTPHeaderField(name: "X Test", value: "fine") }
        #expect(throws: Never.self) { try HTTPHeaderField(name: "X-Test", value: "tab\tand ünïcode are fine") }
    }

    @Test("a catalog token file with a control byte is refused at load", arguments: ["tok\u{1}en", "tok\ren"])
    func catalogTokensAreCheckedLikeSubscriberTokens(_ token: String) throws {
        let directory = TemporaryDirectory("config")
        try directory.write(token, to: "catalog.token")
        try directory.write(
            """
            [courier]
            spool = spool
            [catalog products]
            url = http://127.0.0.1:9/catalogs/products
            token-file = catalog.token
            """, to: "courier.conf")
        do {
            _ = try Configuration.load(file: directory.path + "/courier.conf", readingSecrets: true)
            Issue.record("a token with a control byte was accepted")
        } catch {
            guard case .secret(_, _, "token-file", _, _) = error else {
                Issue.record("expected a token-file error, got \(error)")
                return
            }
        }
    }

    @Test("a token that straddles the ledger's 200-byte cut is redacted whole")
    func tokensAreRedactedBeforeTheCut() throws {
        let token = "TOKEN-abcdefghijklmnopqrstuvwxyz"
        let server = try LoopbackServer(status: 500, body: String(repeating: "x", count: 190) + token + " tail")
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: server.url, token: token)
        ])
        spool.companions.append(server)
        try spool.dropRecord(id: "r1")
        try spool.runRound()
        let text = try spool.ledgerText()
        #expect(text.contains("xxxxxxxxxx"), "the answer is in the ledger")
        #expect(!text.contains("TOKEN-"), "\(text)")
    }

    @Test("batch results' messages are redacted like single answers")
    func batchResultTextIsRedacted() throws {
        let token = "batch-secret-token-123"
        let server = try LoopbackServer { request, _ in
            let results = BatchTests.keys(of: request).map {
                #"{"idempotency_key":"\#($0)","status":"UNAVAILABLE","message":"your token \#(token) is over quota"}"#
            }
            return .respond(.json(200, #"{"results":[\#(results.joined(separator: ","))]}"#))
        }
        var subscriber = try BatchTests.batchSubscriber(server.url)
        subscriber = Subscriber(name: subscriber.name, url: subscriber.url, token: token, concurrency: 1)
        subscriber.mode = .batch
        let spool = try TemporarySpool(subscribers: [subscriber])
        spool.companions.append(server)
        try spool.dropRecord(id: "b1")
        try spool.runRound()
        let text = try spool.ledgerText()
        #expect(text.contains("over quota"), "\(text)")
        #expect(!text.contains(token), "\(text)")
    }

    @Test("credentials in a subscriber URL never reach the ledger, even when the answer echoes them")
    func urlCredentialsAreNeverWritten() throws {
        let server = try LoopbackServer { request, _ in
            .respond(.json(500, "you sent \(request.header("authorization") ?? "nothing") to \(request.target)"))
        }
        let url = server.url.replacingOccurrences(of: "http://", with: "http://operator:pa55word@")
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: url)])
        spool.companions.append(server)
        try spool.dropRecord(id: "r2")
        try spool.runRound()
        let basic = Data("operator:pa55word".utf8).base64EncodedString()
        let text = try spool.ledgerText()
        #expect(text.contains("you sent"), "\(text)")
        #expect(!text.contains("pa55word"), "\(text)")
        #expect(!text.contains(basic), "\(text)")
    }

    @Test("a configuration error about a URL does not repeat its password")
    func configErrorsDoNotEchoUrlPasswords() {
        let text = """
            [subscriber alpha]
            url = ftp://operator:pa55word@127.0.0.1/hook
            """
        do {
            _ = try Configuration.parse(Array(text.utf8), file: "/etc/courier.conf")
            Issue.record("an ftp URL was accepted")
        } catch {
            #expect(!error.description.contains("pa55word"), "\(error)")
        }
    }

    @Test("percent-encoded URL passwords and tokens echoed in other encodings are redacted")
    func encodedSecretsAreRedacted() throws {
        let token = "abc/def+ghi=TOKENxyz"
        let server = try LoopbackServer { request, _ in
            let auth = request.header("authorization") ?? ""
            let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            return .respond(
                .json(500, "auth=\(auth) enc=\(encoded) json=\(token.replacingOccurrences(of: "/", with: "\\/"))"))
        }
        let url = server.url.replacingOccurrences(of: "http://", with: "http://user:p%40ssword@")
        let spool = try TemporarySpool(subscribers: [TemporarySpool.subscriber("alpha", url: url)])
        spool.companions.append(server)
        try spool.dropRecord(id: "e1")
        try spool.runRound()
        var redactor = Redactor()
        redactor.add(token)
        let echoed = "enc=\(token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") j=abc\\/def"
        #expect(!redactor.redact(echoed).contains("TOKENxyz"), "\(redactor.redact(echoed))")
        let text = try spool.ledgerText()
        #expect(text.contains("auth="), "\(text)")
        #expect(!text.contains("p@ssword") && !text.contains("p%40ssword"), "\(text)")
        #expect(!text.contains(Data("user:p@ssword".utf8).base64EncodedString()), "\(text)")
    }
}
