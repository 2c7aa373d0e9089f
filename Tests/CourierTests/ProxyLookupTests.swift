import Testing

@testable import CourierTransport

@Suite struct ProxyLookupTests {
    @Test("no proxy variable, or only empty ones, means every request connects directly")
    func unsetOrEmptyVariablesMeanNoProxy() {
        #expect(ProxyLookup.of { _ in nil } == .none)
        #expect(ProxyLookup.of { _ in "" } == .none)
    }

    @Test("any one proxy variable set leaves the lookup to libcurl, at each request")
    func anyVariableLeavesTheLookupToLibcurl() {
        for name in [
            "no_proxy", "NO_PROXY", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
            "ALL_PROXY",
        ] {
            #expect(ProxyLookup.of { $0 == name ? "http://127.0.0.1:3128" : nil } == .environment, "\(name)")
        }
        #expect(ProxyLookup.of { $0 == "HOME" ? "/root" : nil } == .none)
    }
}
