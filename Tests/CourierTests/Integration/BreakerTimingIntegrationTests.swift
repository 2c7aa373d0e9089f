import Foundation
import Testing

@testable import CourierPosix
@testable import CourierSpool

/// The breaker, timed (issue 12, item 4): a subscriber that takes every
/// connection and never answers, 1,000 entries queued for it.
@Suite(.tags(.integration)) struct BreakerTimingTests {
    @Test("1,000 entries to a subscriber that never answers cost about one timeout, not 1,000/8 of them")
    func aHangingSubscriberCostsOneTimeout() throws {
        let silent = try SilentPort()
        let directory = TemporaryDirectory("breaker")
        // The default 15 s scaled down to 1 s; concurrency and breaker as shipped (8 and 5).
        try directory.write(
            "[courier]\nspool = \(directory.path)/spool\nsettle = 0s\nbackground-timeout = 1s\n"
                + "[subscriber alpha]\nurl = http://\(silent.address)/hook\n", to: "courier.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/courier.conf"
        _ = try binary.run(["--config", config, "init"])
        let spool = try Spool(path: directory.path + "/spool")
        let count = 1000
        for index in 0..<count {
            try spool.deliverNewFile(
                Array(#"{"id":"h-\#(index)","kind":"sleep"}"#.utf8), named: FileName("h-\(index)@alpha.json"),
                into: .queued)
        }

        let started = MonotonicInstant.now()
        let result = try binary.run(["--config", config, "run"])
        let elapsed = MonotonicInstant.now() - started
        print("breaker: a round with \(count) entries to a silent subscriber took \(elapsed): \(result.output)")

        #expect(result.status == 0, "\(result.error)")
        // One timeout for the first eight requests, a second at most for any
        // started while the first silences came in, and the process's own
        // start: about 2 s. Without the breaker it takes about 125 s; 20 s
        // leaves a loaded machine (or a sanitizer) room and still tells them apart.
        #expect(elapsed < .seconds(20), "the round took \(elapsed); without the breaker it takes about 125 s")
        let left = try spool.directory(.queued).sortedNames().count
        let tried = try spool.directory(.needsAttention).sortedNames().count
        #expect(left + tried == count)
        #expect(left >= count - 16, "\(tried) were tried")
        #expect(result.output.contains("alpha not answering: \(left) left queued"), "\(result.output)")
        #expect(result.error.contains("alpha not answering: 5 requests in a row got no answer"), "\(result.error)")
        #expect(try spool.directory(.sending).sortedNames().isEmpty)
        withExtendedLifetime(silent) {}
    }
}
