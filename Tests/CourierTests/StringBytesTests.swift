import Testing

@testable import CourierSupport

/// `withUTF8Bytes` hands out the String's own storage where it can: the
/// bytes must be the text's UTF-8, whatever the String's form.
@Suite struct StringBytesTests {
    @Test("the bytes seen are the text's UTF-8, for empty, small, long, non-ASCII and sliced strings")
    func bytesAreTheTextsUTF8() {
        let long = String(repeating: "ключ-é-\u{1F600}", count: 40)
        let texts = [
            "", "k", "fifteen-bytes!!", "sixteen-bytes!!!", long, String(long.dropFirst(3)),
            String(Substring(long).prefix(17)), "a\u{0}b\\c\t",
        ]
        for text in texts {
            let seen = text.withUTF8Bytes { Array($0) }
            #expect(seen == Array(text.utf8), "\(text.debugDescription)")
        }
    }
}
