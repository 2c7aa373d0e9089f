import Foundation
import Testing

@testable import CourierSink

/// A round whose process runs out of file descriptors as libcurl opens a
/// socket for a delivery: the process's own limit, not the subscriber's
/// silence. The round stops with the error; nothing is counted against
/// the subscriber, and the next round sends every entry under its key.
@Suite(.tags(.integration)) struct SocketLimitTests {
    @Test("a round out of open files for its sockets stops with the error, fails no entry, and the next sends all")
    func runningOutOfSocketsFailsNothing() throws {
        // Room for every connection courier may open: a 503 for too many
        // would be an answer, not the limit this is about.
        let server = try LoopbackServer(status: 201, limits: HTTPServerLimits(maxConnections: 1024))
        let directory = TemporaryDirectory("nosocket")
        // Few records (one intake group, its files closed once committed)
        // and many subscribers with room for all of them: the first
        // requests want some 400 sockets at once, under a limit of 128.
        // Which socket is the first to fail depends on timing; that one
        // fails is certain, and is all the test needs.
        let subscribers = 8
        let records = 50
        var conf = "[courier]\nspool = spool\n"
        for index in 0..<subscribers {
            conf += "[subscriber s\(index)]\nurl = \(server.url)\nconcurrency = 64\n"
        }
        try directory.write(conf, to: "courier.conf")
        let binary = try CourierBinary.locate()
        let config = directory.path + "/courier.conf"
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        for index in 0..<records {
            try #"{"id":"s-\#(index)","kind":"sleep"}"#.write(
                toFile: directory.path + "/spool/queued/s-\(index).json", atomically: false, encoding: .utf8)
        }
        // Both limits, so that courier cannot raise its own.
        let limited = try Shell.run([
            "sh", "-c", "ulimit -n 128 && exec \"$0\" --config \"$1\" run", binary.path, config,
        ])

        // EX_IOERR, as for intake's own limit.
        #expect(limited.status == 74, "\(limited.output)")
        #expect(limited.output.contains("Too many open files"), "\(limited.output)")
        #expect(!limited.output.contains("no answer"), "\(limited.output)")
        let attention = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/needsAttention")
        #expect(attention.isEmpty, "entries flagged: \(attention.prefix(3))")
        let failedLines = try ledgerLines(directory.path + "/spool/ledger").filter {
            ["needsAttention", "failed", "retry", "deferred"].contains($0.event) || $0.detail.contains("no answer")
        }
        #expect(failedLines.isEmpty, "counted against the subscriber: \(failedLines.prefix(3).map(\.detail))")

        let again = try binary.run(["--config", config, "run"])
        #expect(again.status == 0, "\(again.error)")
        let sent = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/spool/sent")
        #expect(sent.count == records * subscribers)
        // One `sent` line for each entry, and the server saw every key.
        var sentLines: [String: Int] = [:]
        for line in try ledgerLines(directory.path + "/spool/ledger") where line.event == "sent" {
            sentLines[line.subscriber + "/" + line.key, default: 0] += 1
        }
        #expect(sentLines.count == records * subscribers)
        #expect(sentLines.values.allSatisfy { $0 == 1 })
        #expect(Set(server.countsByKey.keys).isSuperset(of: (0..<records).map { "s-\($0)" }))
        let attentionAfter = try FileManager.default.contentsOfDirectory(
            atPath: directory.path + "/spool/needsAttention")
        #expect(attentionAfter.isEmpty)
    }

    private struct Line {
        let subscriber: String
        let key: String
        let event: String
        let detail: String
    }

    private func ledgerLines(_ folder: String) throws -> [Line] {
        var lines: [Line] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".tsv") {
            let text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            for row in text.split(separator: "\n") {
                let fields = row.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard fields.count >= 9 else { continue }
                lines.append(Line(subscriber: fields[2], key: fields[3], event: fields[4], detail: fields[8]))
            }
        }
        return lines
    }
}
