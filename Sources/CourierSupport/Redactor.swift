import Foundation

/// Takes secrets out of text that is about to be kept (the ledger, the
/// journal, state files, error messages): bearer tokens, and credentials
/// written into a URL as `user:password@`, in the forms an answer could
/// echo them (as written, and as the Basic authorisation curl made).
/// Redaction happens on the whole text, before anything cuts it short, so
/// a secret that straddles a cut cannot leak its first bytes.
package struct Redactor: Sendable {
    package private(set) var secrets: [String] = []

    package init(secrets: [String] = []) {
        for secret in secrets { add(secret) }
    }

    package static let mark = "[redacted]"

    /// Adds a secret in the forms an answer could echo it: as is,
    /// percent-encoded, and JSON-escaped. Short strings would redact
    /// ordinary words; a real secret is longer.
    package mutating func add(_ secret: String) {
        guard secret.utf8.count >= 4 else { return }
        var forms = [secret, secret.replacingOccurrences(of: "/", with: "\\/")]
        if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) { forms.append(encoded) }
        for form in forms where !secrets.contains(form) { secrets.append(form) }
        // Longest first, so a secret that contains another goes whole.
        secrets.sort { $0.utf8.count > $1.utf8.count }
    }

    /// Adds every secret of `other`, in the forms it already knows.
    package mutating func add(contentsOf other: Redactor) {
        for form in other.secrets where !secrets.contains(form) { secrets.append(form) }
        secrets.sort { $0.utf8.count > $1.utf8.count }
    }

    /// Adds a URL's `user:password`, its password, and the Basic
    /// credentials curl makes of them, both as written in the URL and
    /// percent-decoded (curl decodes them before it sends them).
    package mutating func addCredentials(of url: String) {
        guard let userinfo = Self.userinfo(of: url) else { return }
        for form in Set([userinfo, userinfo.removingPercentEncoding ?? userinfo]) {
            add(form)
            if let colon = form.firstIndex(of: ":") {
                add(String(form[form.index(after: colon)...]))
                let user = String(form[..<colon]).removingPercentEncoding ?? String(form[..<colon])
                let password =
                    String(form[form.index(after: colon)...]).removingPercentEncoding
                    ?? String(form[form.index(after: colon)...])
                add(Data("\(user):\(password)".utf8).base64EncodedString())
                add(password)
            } else {
                add(Data(form.utf8).base64EncodedString())
            }
        }
    }

    /// How many bytes past a cut must be read so that any secret starting
    /// before the cut is seen whole.
    package var longest: Int { secrets.first?.utf8.count ?? 0 }

    package func redact(_ text: String) -> String {
        var result = text
        for secret in secrets where Self.mayOccur(secret, in: result) {
            result = result.replacingOccurrences(of: secret, with: Self.mark)
        }
        return result
    }

    /// Whether `replacingOccurrences` may have something to replace: for
    /// an ASCII secret a byte search, which finds every match a String
    /// search does (and a few it does not, which then replace nothing);
    /// every ledger line's detail is redacted, and nearly none holds a
    /// secret. Other secrets are searched as Strings.
    private static func mayOccur(_ secret: String, in text: String) -> Bool {
        guard secret.utf8.allSatisfy({ $0 < 0x80 }) else { return text.contains(secret) }
        return occursAsBytes(secret, in: text)
    }

    private static func occursAsBytes(_ secret: String, in text: String) -> Bool {
        text.withUTF8Bytes { haystack in
            secret.withUTF8Bytes { needle in
                guard let first = needle.first, haystack.count >= needle.count else { return false }
                var start = 0
                while start + needle.count <= haystack.count {
                    guard let found = haystack[start...(haystack.count - needle.count)].firstIndex(of: first) else {
                        return false
                    }
                    if haystack[found..<(found + needle.count)].elementsEqual(needle) { return true }
                    start = found + 1
                }
                return false
            }
        }
    }

    /// The first `limit` bytes of an answer as text, secrets taken out
    /// before the cut (never cutting a character in half).
    package func excerpt(_ bytes: some Collection<UInt8>, limit: Int) -> String {
        let text = String(decoding: bytes.prefix(limit + longest), as: UTF8.self)
        return redact(text).utf8Prefix(limit)
    }

    /// `scheme://user:password@host/…` → `user:password`.
    static func userinfo(of url: String) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return nil }
        let userinfo = String(authority[..<at])
        return userinfo.isEmpty ? nil : userinfo
    }

    /// The URL as it may be shown: credentials replaced by the mark.
    package static func displayURL(_ url: String) -> String {
        guard let userinfo = userinfo(of: url), let range = url.range(of: userinfo + "@") else { return url }
        return url.replacingCharacters(in: range, with: mark + "@")
    }
}
