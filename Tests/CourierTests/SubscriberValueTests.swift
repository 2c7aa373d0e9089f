import Testing

@testable import CourierConfig
@testable import CourierIdentifiers

/// `Subscriber` keeps its settings behind one shared reference; it must
/// still behave as a value.
@Suite struct SubscriberValueTests {
    /// Every setting a subscriber has, as `Mirror` sees its storage.
    static func settings(_ subscriber: Subscriber) -> [String: String] {
        guard let storage = Mirror(reflecting: subscriber).children.first(where: { $0.label == "storage" })?.value
        else { return [:] }
        var fields: [String: String] = [:]
        for child in Mirror(reflecting: storage).children {
            fields[child.label ?? "?"] = String(describing: child.value)
        }
        return fields
    }

    static func everySettingChanged() throws -> Subscriber {
        var subscriber = Subscriber(
            name: try #require(SubscriberName("alpha")), url: "http://127.0.0.1:9/hook", kinds: ["sleep"],
            tokenFile: "/t",
            headers: [try HTTPHeaderField(name: "X-A", value: "1")], concurrency: 3, caFile: "/ca",
            signingSecretFile: "/s", line: 7)
        subscriber.token = "token"
        subscriber.signingSecret = [1, 2, 3]
        subscriber.mode = .batch
        subscriber.batch = BatchSettings(size: 9, atomic: true)
        subscriber.gzip = true
        subscriber.oauth = OAuthClient(tokenURL: "http://127.0.0.1:9/token", clientID: "c", secret: "s")
        subscriber.retrySchedule = [.seconds(60)]
        subscriber.breaker = .after(4)
        subscriber.tokenFileLine = 8
        subscriber.signingSecretFileLine = 9
        return subscriber
    }

    @Test("a copy changed keeps every other setting, and the original keeps all of its own")
    func copyOnWrite() throws {
        let original = try Self.everySettingChanged()
        let before = Self.settings(original)
        #expect(before.count == 19, "every stored setting is seen: \(before.keys.sorted())")
        var copy = original
        copy.gzip = false
        copy.batch.atomic = false
        let after = Self.settings(copy)
        #expect(Self.settings(original) == before, "the original is untouched")
        #expect(after.filter { before[$0.key] != $0.value }.keys.sorted() == ["batch", "gzip"])
        #expect(original.gzip && original.batch.atomic && !copy.gzip && !copy.batch.atomic)
    }

    @Test("a subscriber changed while no other value shares it stays one value")
    func changedAlone() throws {
        var subscriber = try Self.everySettingChanged()
        subscriber.mode = .single
        subscriber.retrySchedule = nil
        #expect(subscriber.mode == .single && subscriber.retrySchedule == nil && subscriber.token == "token")
    }
}
