import Foundation
import Testing

@testable import CourierTransport

/// A round's requests follow the proxy variables of courier's environment
/// as libcurl reads them, although courier looks at them once per round
/// (`ProxyLookup`) and, where none is set, tells libcurl there is no proxy.
@Suite(.tags(.integration)) struct ProxyEnvironmentTests {
    /// Every variable libcurl reads for a proxy, empty: what the test
    /// runner's own environment holds cannot decide these tests.
    static let noProxyVariables = Dictionary(uniqueKeysWithValues: ProxyLookup.variables.map { ($0, "") })

    /// Runs one round over one dropped record to `server`, with
    /// `environment` over the empty proxy variables.
    static func deliverOne(to server: LoopbackServer, environment: [String: String]) throws -> (
        run: CourierBinary.Result, ledger: String, sent: [String]
    ) {
        let directory = TemporaryDirectory("proxy-environment")
        let binary = try CourierBinary.locate()
        let config = try binary.initializeSpool(in: directory, subscriberURL: server.url)
        try directory.write(#"{"id":"r-1","kind":"sleep"}"#, to: "spool/queued/r1.json")
        let run = try binary.run(
            ["--config", config, "run"], environment: noProxyVariables.merging(environment) { $1 })
        let ledger = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/ledger")
            .map { try String(contentsOfFile: directory.path + "/spool/ledger/" + $0, encoding: .utf8) }
            .joined()
        let sent = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/sent")
        return (run, ledger, sent)
    }

    @Test("with no proxy variable set, a round connects to the subscriber directly")
    func noVariableConnectsDirectly() throws {
        let server = try LoopbackServer(status: 204)
        let round = try Self.deliverOne(to: server, environment: [:])
        #expect(round.run.output.contains("1 sent"), "\(round.run.output) \(round.run.error)")
        #expect(round.sent == ["r-1@hook.json"])
        #expect(server.requests.count == 1)
    }

    @Test("a round's requests go to the proxy http_proxy names, and one that refuses keeps them from the subscriber")
    func httpProxyIsUsed() throws {
        let server = try LoopbackServer(status: 204)
        let proxy = try RefusingPort()
        let round = try Self.deliverOne(to: server, environment: ["http_proxy": "http://\(proxy.address)"])
        #expect(server.requests.isEmpty)
        #expect(round.sent.isEmpty)
        // The refusal is the proxy's port, not the subscriber's.
        #expect(round.ledger.contains("port \(proxy.port)"), "\(round.ledger)")
        withExtendedLifetime(proxy) {}
    }

    @Test("a host no_proxy names is reached directly, past the proxy http_proxy names")
    func noProxyIsHonoured() throws {
        let server = try LoopbackServer(status: 204)
        let proxy = try RefusingPort()
        let round = try Self.deliverOne(
            to: server, environment: ["http_proxy": "http://\(proxy.address)", "no_proxy": "127.0.0.1"])
        #expect(round.run.output.contains("1 sent"), "\(round.run.output) \(round.run.error)")
        #expect(server.requests.count == 1)
        withExtendedLifetime(proxy) {}
    }

    @Test("only ALL_PROXY, upper case, set: a round's requests go to that proxy")
    func upperCaseAllProxyIsUsed() throws {
        let server = try LoopbackServer(status: 204)
        let proxy = try RefusingPort()
        let round = try Self.deliverOne(to: server, environment: ["ALL_PROXY": "http://\(proxy.address)"])
        #expect(server.requests.isEmpty)
        #expect(round.sent.isEmpty)
        #expect(round.ledger.contains("port \(proxy.port)"), "\(round.ledger)")
        withExtendedLifetime(proxy) {}
    }

    @Test("only all_proxy naming a SOCKS5 proxy: a round's requests go to it")
    func socksAllProxyIsUsed() throws {
        let server = try LoopbackServer(status: 204)
        let proxy = try RefusingPort()
        let round = try Self.deliverOne(to: server, environment: ["all_proxy": "socks5h://\(proxy.address)"])
        #expect(server.requests.isEmpty)
        #expect(round.sent.isEmpty)
        withExtendedLifetime(proxy) {}
    }

    @Test("only HTTP_PROXY, upper case, set: libcurl ignores it for http URLs, and so does courier")
    func upperCaseHTTPProxyIsIgnored() throws {
        let server = try LoopbackServer(status: 204)
        let proxy = try RefusingPort()
        let round = try Self.deliverOne(to: server, environment: ["HTTP_PROXY": "http://\(proxy.address)"])
        #expect(round.run.output.contains("1 sent"), "\(round.run.output) \(round.run.error)")
        #expect(server.requests.count == 1)
        withExtendedLifetime(proxy) {}
    }

    @Test("no_proxy=* with a proxy set: direct, as libcurl does")
    func noProxyStarIsDirect() throws {
        let server = try LoopbackServer(status: 204)
        let proxy = try RefusingPort()
        let round = try Self.deliverOne(
            to: server, environment: ["all_proxy": "http://\(proxy.address)", "NO_PROXY": "*"])
        #expect(round.run.output.contains("1 sent"), "\(round.run.output) \(round.run.error)")
        #expect(server.requests.count == 1)
        withExtendedLifetime(proxy) {}
    }
}
