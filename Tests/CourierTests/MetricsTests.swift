import Foundation
import Testing

@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool

/// The metrics file's figures for the questions an operator asks: what
/// waits for whom, since when, what is deferred and until when, whether the
/// notifier works; and numbers printed without float noise.
@Suite struct MetricsTests {
    static func spool() throws -> TemporarySpool {
        try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/"),
            TemporarySpool.subscriber("beta", url: "http://127.0.0.1:9/"),
        ])
    }

    static func sample(_ text: String, _ name: String, _ labels: String = "") -> String? {
        let prefix = name + labels + " "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    @Test("courier_items counts each subscriber's items in each state, zeros included, and `-` for dropped files")
    func itemsPerSubscriberAndState() throws {
        let spool = try Self.spool()
        for name in ["a-1@alpha.json", "a-2@alpha.json", "b-1@beta.json"] {
            try spool.spool.deliverNewFile(Array(#"{"id":"x","kind":"k"}"#.utf8), named: FileName(name), into: .queued)
        }
        try spool.spool.deliverNewFile(Array("{}".utf8), named: FileName("b-2@beta.json"), into: .needsAttention)
        try spool.drop(#"{"id":"new","kind":"k"}"#, as: "export.json")
        let text = try MetricsFile(path: "/dev/null", session: spool.session, configuration: spool.configuration)
            .render(summary: nil, exitStatus: 0)
        #expect(Self.sample(text, "courier_items", #"{state="queued",subscriber="alpha"}"#) == "2")
        #expect(Self.sample(text, "courier_items", #"{state="queued",subscriber="beta"}"#) == "1")
        #expect(Self.sample(text, "courier_items", #"{state="queued",subscriber="-"}"#) == "1")
        #expect(Self.sample(text, "courier_items", #"{state="needsAttention",subscriber="beta"}"#) == "1")
        #expect(Self.sample(text, "courier_items", #"{state="sent",subscriber="alpha"}"#) == "0")
        // Every state for every subscriber and `-`: 6 × 3 samples.
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("courier_items{") }.count == 18)
    }

    @Test("the oldest item's age per subscriber counts from intake, and a deferred entry's future stamp is no age")
    func oldestAgeFromIntake() throws {
        let spool = try Self.spool()
        spool.configuration.subscribers[1].retrySchedule = [.seconds(3600)]
        let now = Timestamp.now()
        try spool.spool.deliverNewFile(Array("{}".utf8), named: FileName("old@alpha.json"), into: .queued)
        try spool.spool.deliverNewFile(Array("{}".utf8), named: FileName("new@alpha.json"), into: .queued)
        try spool.spool.directory(.queued).setModified(FileName("old@alpha.json"), to: now - .seconds(7200))
        try spool.spool.directory(.queued).setModified(FileName("new@alpha.json"), to: now - .seconds(60))
        // Deferred: the mtime is the next attempt, an hour ahead.
        try spool.spool.deliverNewFile(Array("{}".utf8), named: FileName("d@beta.json"), into: .queued)
        let stamp = DeferralStamp(due: now + .seconds(3600), deferrals: 2)
        try spool.spool.directory(.queued).setModified(FileName("d@beta.json"), to: stamp.modified)
        let text = try MetricsFile(path: "/dev/null", session: spool.session, configuration: spool.configuration)
            .render(summary: nil, exitStatus: 0, now: now)
        #expect(Self.sample(text, "courier_oldest_item_age_seconds", #"{state="queued",subscriber="alpha"}"#) == "7200")
        let deferredAge = Self.sample(text, "courier_oldest_item_age_seconds", #"{state="queued",subscriber="beta"}"#)
        #expect(deferredAge.flatMap { Int($0) }.map { (0...60).contains($0) } == true, "\(deferredAge ?? "none")")
        #expect(Self.sample(text, "courier_oldest_item_age_seconds", #"{state="failed",subscriber="alpha"}"#) == "0")
        #expect(!text.contains(#"courier_oldest_item_age_seconds{state="sent""#), "sent/ is history, not backlog")
        #expect(Self.sample(text, "courier_deferred_items", #"{subscriber="beta"}"#) == "1")
        #expect(
            Self.sample(text, "courier_next_attempt_timestamp_seconds", #"{subscriber="beta"}"#)
                == String(stamp.due.secondsSinceEpoch))
        #expect(!text.contains(#"courier_deferred_items{subscriber="alpha"}"#), "alpha has no retry-schedule")
    }

    @Test("one function computes an item's age: from its intake time, never negative")
    func itemAge() {
        let now = Timestamp(secondsSinceEpoch: 1_000_000)
        #expect(ItemAge.age(sinceIntake: now - .seconds(90), now: now) == .seconds(90))
        #expect(ItemAge.age(sinceIntake: now + .seconds(90), now: now) == .zero)
    }

    @Test("courier_notifier_up is 1 until a notifier run fails, 0 after, and absent without a notify-command")
    func notifierUp() throws {
        let spool = try Self.spool()
        let render = {
            try MetricsFile(path: "/dev/null", session: spool.session, configuration: spool.configuration)
                .render(summary: nil, exitStatus: 0)
        }
        #expect(!(try render()).contains("courier_notifier_up"))
        spool.configuration.notifyCommand = "/usr/local/bin/courier-notify"
        #expect(Self.sample(try render(), "courier_notifier_up") == "1", "configured, not run yet")
        let failed = NotifierHealth(working: false, detail: "exited with status 1", time: "t", round: "r")
        try spool.spool.writeControlFile(NotifierHealth.file, Array(try JSONEncoder().encode(failed)))
        #expect(Self.sample(try render(), "courier_notifier_up") == "0")
        spool.configuration.notify = .off
        #expect(!(try render()).contains("courier_notifier_up"))
    }

    @Test("timestamps and durations are decimals written from integers, never float noise")
    func numbersWithoutFloatNoise() throws {
        typealias Exposition = MetricsFile.Exposition
        #expect(Exposition.seconds(Timestamp(nanosecondsSinceEpoch: 1_796_140_223_264_999_900)) == "1796140223.264")
        #expect(Exposition.seconds(Timestamp(secondsSinceEpoch: 1_796_140_223)) == "1796140223.000")
        #expect(Exposition.seconds(milliseconds: 32) == "0.032")
        #expect(Exposition.seconds(milliseconds: 90_061) == "90.061")
        #expect(Exposition.ratio(0.1 + 0.2) == "0.3")
        #expect(Exposition.ratio(1.0 / 3.0) == "0.333333")
        #expect(Exposition.ratio(1) == "1")
        #expect(Exposition.ratio(0) == "0")
        let spool = try Self.spool()
        let text = try MetricsFile(path: "/dev/null", session: spool.session, configuration: spool.configuration)
            .render(summary: nil, exitStatus: 0)
        #expect(Self.sample(text, "courier_last_round_timestamp_seconds") == "0", "no round has ever ended")
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let value = line.split(separator: " ").last.map(String.init) ?? ""
            let digits = value.split(separator: ".").last ?? ""
            #expect(!value.contains("e") && digits.count <= 6, "\(line)")
        }
    }

    @Test("a round's metrics carry its end in milliseconds, and a refresh keeps it")
    func lastRoundTimestamp() throws {
        let spool = try Self.spool()
        spool.configuration.metricsFile = spool.directory.path + "/courier.prom"
        try spool.dropRecord(id: "s-1")
        let summary = try spool.runRound()
        let file = MetricsFile(
            path: spool.directory.path + "/courier.prom", session: spool.session, configuration: spool.configuration)
        try file.write(summary: summary, exitStatus: 0)
        let finished = try #require(Timestamp(rfc3339: summary.finished))
        var written = try String(contentsOfFile: spool.directory.path + "/courier.prom", encoding: .utf8)
        #expect(
            Self.sample(written, "courier_last_round_timestamp_seconds") == MetricsFile.Exposition.seconds(finished))
        try file.refresh()
        written = try String(contentsOfFile: spool.directory.path + "/courier.prom", encoding: .utf8)
        #expect(
            Self.sample(written, "courier_last_round_timestamp_seconds") == MetricsFile.Exposition.seconds(finished))
    }
}
