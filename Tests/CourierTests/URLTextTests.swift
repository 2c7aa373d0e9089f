import Testing

@testable import CourierSupport

@Suite struct URLTextTests {
    @Test(
        "a URL's text splits at its first ? before its first #, and a ? in the fragment is the fragment's",
        arguments: [
            ("http://h/p", "http://h/p", nil, ""),
            ("http://h/p?", "http://h/p", "", ""),
            ("http://h/p?a=1&b=2", "http://h/p", "a=1&b=2", ""),
            ("http://h/p?a=1?b#f?g", "http://h/p", "a=1?b", "#f?g"),
            ("http://h/p#f?g", "http://h/p", nil, "#f?g"),
            ("http://h/p#", "http://h/p", nil, "#"),
        ] as [(String, String, String?, String)])
    func splits(text: String, beforeQuery: String, query: String?, fragment: String) {
        let parts = URLText(text)
        #expect(String(parts.beforeQuery) == beforeQuery)
        #expect(parts.query.map(String.init) == query)
        #expect(String(parts.fragment) == fragment)
    }
}
