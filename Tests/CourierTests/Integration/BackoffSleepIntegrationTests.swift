import Foundation
import Glibc
import Testing

@testable import CourierConfig
@testable import CourierPosix
@testable import CourierSpool
@testable import CourierTransport

/// A foreground round that waits out its backoff sleeps (issue 12): with
/// nothing in flight the loop used to spin a whole core until the next
/// retry was due.
@Suite(.tags(.integration)) struct BackoffSleepTests {
    @Test("with nothing in flight the transport sleeps out the wait it is given")
    func anIdleTransportSleeps() throws {
        let client = try HTTPClient(timeout: .seconds(5))
        let started = MonotonicInstant.now()
        let cpuBefore = Self.threadCPU()
        #expect(try client.collect(wait: .milliseconds(300)).isEmpty)
        let cpu = Self.threadCPU() - cpuBefore
        let elapsed = MonotonicInstant.now() - started
        #expect(elapsed >= .milliseconds(295), "returned after \(elapsed)")
        #expect(cpu < 0.05, "spent \(cpu) s of CPU waiting 0.3 s")
    }

    /// This thread's CPU time in seconds.
    static func threadCPU() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
    }

    /// The issue's measurement, with the built binary: `send-now` against a
    /// subscriber that refuses every connection, three 1 s backoffs. bash's
    /// `times` reports the CPU its child used.
    @Test("send-now waiting out its backoff against a dead subscriber uses at most 5 % of a core")
    func sendNowSleepsThroughItsBackoff() throws {
        let refusing = try RefusingPort()
        let directory = TemporaryDirectory("backoff-sleep")
        try directory.write(
            "[courier]\nspool = \(directory.path)/spool\nbackoff = 1s 1s 1s\nsettle = 0s\n"
                + "[subscriber dead]\nurl = http://\(refusing.address)/gone\n", to: "courier.conf")
        let binary = try CourierBinary.locate()
        _ = try binary.run(["--config", directory.path + "/courier.conf", "init"])
        try directory.write(#"{"id":"r-1","kind":"sleep"}"#, to: "spool/queued/r-1.json")

        let started = MonotonicInstant.now()
        let result = try Shell.run([
            "bash", "-c", #""$0" --config "$1" send-now >/dev/null 2>&1; echo "exit $?"; times"#, binary.path,
            directory.path + "/courier.conf",
        ])
        let wall = Double((MonotonicInstant.now() - started).milliseconds) / 1000
        let lines = result.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("exit ") == true, "\(result.output)")
        let settled = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/needsAttention")
        #expect(settled == ["r-1@dead.json"], "four attempts, then a person's turn")
        // `times`: the shell's user and system time, then its children's.
        let children = try #require(lines.last).split(separator: " ").map { Self.parseTimes(String($0)) }
        let cpu = children.reduce(0, +)
        #expect(wall >= 3, "the backoff was not waited out: \(wall) s")
        #expect(cpu <= 0.05 * wall, "send-now used \(cpu) s of CPU in \(wall) s")
        withExtendedLifetime(refusing) {}
    }

    /// `0m1.250s` → 1.25.
    static func parseTimes(_ text: String) -> Double {
        let parts = text.dropLast().split(separator: "m")
        guard parts.count == 2, let minutes = Double(parts[0]), let seconds = Double(parts[1]) else { return .infinity }
        return minutes * 60 + seconds
    }
}
