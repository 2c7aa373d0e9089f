import Foundation
import Testing

@testable import CourierRecords

/// The sink's one pass over a body: it checks the text as strictly as
/// intake's validator, UTF-8 included, and finds members without a second
/// scan.
@Suite struct JSONOutlineTests {
    @Test(
        "valid JSON texts are taken",
        arguments: [
            #"{}"#, #"[]"#, #" {"a":1} "#, #"{"a":[1,2.5e-3,-0,true,false,null,"x"]}"#, #""text""#, "12",
            #"{"é":"naïve ☃ 𝄞"}"#, #"{"a":"\u00e9\n\"\\\/"}"#, #"[[[[[[{"deep":[]}]]]]]]"#,
        ])
    func validTexts(text: String) {
        #expect(JSONOutline(Array(text.utf8), levels: 2) != nil)
    }

    @Test("a byte the string check must see is seen wherever it falls in the words read eight at a time")
    func specialBytesAtEveryOffset() {
        let specials: [[UInt8]] = [
            [0x22], [0x5C, 0x6E], [0x5C, 0x75, 0x30, 0x30, 0x65, 0x39], [0x5C, 0x78], [0x00], [0x09], [0x1F],
            [0x7F], [0xC3, 0xA9], [0xC3], [0xFF], [0xED, 0xA0, 0x80], [0xF0, 0x9D, 0x84, 0x9E],
        ]
        for special in specials {
            for offset in 0..<33 {
                for tail in [0, 1, 7, 8, 9, 15, 16, 17] {
                    let text =
                        Array(#"{"a":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: offset) + special
                        + Array(repeating: UInt8(ascii: "y"), count: tail) + Array(#""}"#.utf8)
                    let outline = JSONOutline(text, levels: 1)
                    // The validator leaves UTF-8 to its caller; the outline checks both.
                    let valid = JSONValidator.isValid(text) && String(validating: text, as: UTF8.self) != nil
                    #expect(
                        (outline != nil) == valid,
                        "\(special) after \(offset) bytes, \(tail) after it")
                    if let outline, outline.kind(of: outline.root) == .object {
                        let value = outline.members(of: outline.root).first?.value
                        #expect(value?.upperBound == text.count - 1, "the string ends at its closing quote")
                    }
                }
            }
        }
    }

    @Test(
        "texts that are not exactly one JSON value are refused",
        arguments: [
            "", " ", #"{"a":1"#, #"{"a":1}}"#, #"{"a":1,}"#, #"[1,]"#, #"{a:1}"#, #"{"a" 1}"#, "01", "1.", "-",
            "1e", "tru", "nul", #""unterminated"#, #""bad \x escape""#, #""\u12G4""#, "\"tab\there\"",
            #"{"a":1} {"b":2}"#, "'single'",
        ])
    func invalidTexts(text: String) {
        #expect(JSONOutline(Array(text.utf8), levels: 2) == nil)
    }

    @Test(
        "bytes that are not UTF-8 are refused, inside strings and out",
        arguments: [
            [0xC0, 0xAF],  // an overlong "/"
            [0xE0, 0x80, 0xAF],  // overlong, three bytes
            [0xED, 0xA0, 0x80],  // a surrogate, U+D800
            [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
            [0xF5, 0x80, 0x80, 0x80],
            [0x80],  // a continuation byte alone
            [0xC3],  // a sequence cut short by the quote
            [0xE2, 0x98],
            [0xFF],
        ] as [[UInt8]])
    func notUTF8(bytes: [UInt8]) {
        let inString = Array(#"{"a":""#.utf8) + bytes + Array(#""}"#.utf8)
        #expect(JSONOutline(inString, levels: 1) == nil)
        let bare = Array(#"{"a":"#.utf8) + bytes + Array("}".utf8)
        #expect(JSONOutline(bare, levels: 1) == nil)
    }

    @Test("nesting deeper than 512 levels is refused, 512 are taken")
    func depthLimit() {
        let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(JSONOutline(Array(deepest.utf8), levels: 1) != nil)
        let tooDeep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(JSONOutline(Array(tooDeep.utf8), levels: 1) == nil)
    }

    @Test("members are found by name, the last of a repeated name wins, values are exact bytes")
    func members() throws {
        let text = #"{ "id" : "first", "n": 12.5, "id":"second", "data": {"x": [1, 2]} }"#
        let outline = try #require(JSONOutline(Array(text.utf8), levels: 1))
        #expect(outline.kind(of: outline.root) == .object)
        let id = try #require(outline.member("id", of: outline.root))
        #expect(outline.string(id) == "second")
        let n = try #require(outline.member("n", of: outline.root))
        #expect(outline.kind(of: n) == .scalar)
        #expect(outline.value(of: n) == Array("12.5".utf8))
        #expect(outline.string(n) == nil)
        let data = try #require(outline.member("data", of: outline.root))
        #expect(outline.value(of: data) == Array(#"{"x": [1, 2]}"#.utf8))
        #expect(outline.member("missing", of: outline.root) == nil)
        #expect(outline.children(of: outline.root).count == 4)
    }

    @Test("values deeper than the levels asked for are checked but not noted")
    func levels() throws {
        let text = #"{"items":[{"idempotency_key":"k","payload":{"id":"p","data":{"route":"x"}}}]}"#
        let outline = try #require(JSONOutline(Array(text.utf8), levels: 4))
        let items = try #require(outline.member("items", of: outline.root))
        #expect(outline.kind(of: items) == .array)
        let item = try #require(outline.children(of: items).first)
        let payload = try #require(outline.member("payload", of: item))
        #expect(outline.member("id", of: payload).flatMap(outline.string) == "p")
        let data = try #require(outline.member("data", of: payload))
        // Level 4: noted itself, its members not.
        #expect(outline.kind(of: data) == .object)
        #expect(outline.member("route", of: data) == nil)
        #expect(outline.children(of: data).isEmpty)
        // The same text with a fault four levels down is refused all the same.
        let broken = text.replacingOccurrences(of: #""route":"x""#, with: #""route":x"#)
        #expect(JSONOutline(Array(broken.utf8), levels: 1) == nil)
    }

    @Test("escaped strings are decoded, and an escaped name is not the plain one")
    func escapes() throws {
        let text = #"{"\u0069d":"escaped name","key":"a\tb \u00e9 \ud834\udd1e"}"#
        let outline = try #require(JSONOutline(Array(text.utf8), levels: 1))
        #expect(outline.member("id", of: outline.root) == nil)
        #expect(outline.member("key", of: outline.root).flatMap(outline.string) == "a\tb é 𝄞")
    }
}
