/// The cursors one sync has asked with, and how many pages it fetched: a
/// server whose cursors lead back to one already asked for (A → B → A) or
/// that pages past `max-pages` would otherwise keep the sync, and its
/// `catalog-NAME.lock`, forever. Checked before a page is applied.
struct PageTrail {
    let maxPages: Int
    /// Each cursor asked with in this sync, and the page it was asked for.
    private var asked: [String: Int] = [:]
    private(set) var pages = 0

    /// `start` is the cursor the first page is asked with: nil for a new
    /// sync, the saved one for a resumed sync.
    init(maxPages: Int, start: String?) {
        self.maxPages = maxPages
        if let start { asked[start] = 1 }
    }

    /// Why the sync must stop after page `pages + 1`, which said `next`;
    /// nil when it may go on (and `next` is noted as asked).
    mutating func problem(after next: String?) -> String? {
        pages += 1
        guard let next else { return nil }
        if let earlier = asked[next] {
            return "\(pages) pages fetched, and page \(pages)'s next_cursor \(CatalogPage.quoted(next)) leads back "
                + "to page \(earlier): the server's cursors go round in a circle"
        }
        if pages >= maxPages {
            return "\(pages) pages fetched, and page \(pages)'s next_cursor \(CatalogPage.quoted(next)) asks for "
                + "more than max-pages (\(maxPages))"
        }
        asked[next] = pages + 1
        return nil
    }
}
