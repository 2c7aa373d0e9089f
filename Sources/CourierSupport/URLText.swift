/// A URL's text split where RFC 3986 (§3.4, §3.5) splits its end: what
/// comes before the query, the query, the fragment. For adding to a URL a
/// configuration gives: a query parameter, a path segment. Text only; the
/// URL itself is libcurl's to parse.
package struct URLText {
    /// Up to the first `?` (or `#`, or the end).
    package let beforeQuery: Substring
    /// Between `?` and `#`, without the `?`; nil when there is no `?`.
    package let query: Substring?
    /// From `#` on, `#` included; empty when there is none. libcurl
    /// leaves it off the request, and a `?` in it is not a query.
    package let fragment: Substring

    package init(_ text: String) {
        let fragmentStart = text.firstIndex(of: "#") ?? text.endIndex
        fragment = text[fragmentStart...]
        let beforeFragment = text[..<fragmentStart]
        if let mark = beforeFragment.firstIndex(of: "?") {
            beforeQuery = beforeFragment[..<mark]
            query = beforeFragment[beforeFragment.index(after: mark)...]
        } else {
            beforeQuery = beforeFragment
            query = nil
        }
    }
}
