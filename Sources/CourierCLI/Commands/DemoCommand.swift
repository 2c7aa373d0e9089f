import CourierConfig
import CourierPosix
import CourierRound
import CourierSink
import CourierSpool
import Foundation
import Glibc

/// `courier demo`: a real round on a temporary spool against embedded
/// sinks on loopback. The directory is left for the person to explore.
enum DemoCommand {
    static let command = Command(
        "demo", summary: "a real round on a temporary spool against embedded sinks",
        details: "The directory (/tmp/courier-demo-XXXXXX) is kept, to look around in.", example: "courier demo",
        run: { operands, invocation throws(CLIError) in try run(operands, invocation) })

    static func run(_ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        try operands.none(for: "demo")
        let output = invocation.output
        let demo = try setUp()
        output.line("== courier demo in \(demo.base)")
        output.line(
            "sinks: archive on \(demo.archive.address), coach on \(demo.coach.address); legacy is down (port \(demo.downPort))"
        )
        output.line()
        try dropRecords(into: demo.session, output)

        output.line("== courier run --background")
        let result: RoundResult
        do {
            result = try Round(session: demo.session, configuration: demo.configuration, mode: .background).run(
                wait: true)
        } catch {
            throw .round(error)
        }
        if case .ran(let summary) = result { output.line(RunCommand.describe(summary)) }
        output.line()
        show(demo, invocation)
        demo.archive.stop()
        demo.coach.stop()
    }

    /// A temporary directory with two sinks, a subscriber that is down, a
    /// configuration for the three, and its spool.
    private struct Demo {
        let base: String
        let archive: HTTPServer
        let coach: HTTPServer
        let downPort: UInt16
        let configFile: String
        let configuration: Configuration
        let session: SpoolSession
        var spool: Spool { session.spool }
    }

    private static func setUp() throws(CLIError) -> Demo {
        let base: String
        do { base = try PathOperations.makeTemporaryDirectory(template: "/tmp/courier-demo-XXXXXX") } catch {
            throw .io(error.description)
        }

        let archive = try startSink(at: base + "/sink-archive")
        let coach = try startSink(at: base + "/sink-coach")
        // A port that was just free and is closed again: a subscriber that
        // is down, to show what a failure looks like.
        let downPort = try freePort()

        let configFile = base + "/courier.conf"
        let config = """
            ; written by `courier demo`
            [courier]
            spool = spool
            device-id = demo
            settle = 1s

            [subscriber archive]
            url = http://\(archive.address)/records
            kinds = sleep workout route

            [subscriber coach]
            url = http://\(coach.address)/workouts
            kinds = workout

            [subscriber legacy]
            url = http://127.0.0.1:\(downPort)/old-endpoint
            kinds = sleep

            """
        do { try config.write(toFile: configFile, atomically: true, encoding: .utf8) } catch {
            throw .io("unable to write \(configFile): \(error)")
        }
        let configuration: Configuration
        do { configuration = try Configuration.load(file: configFile, readingSecrets: true) } catch {
            throw .config(error)
        }
        let session: SpoolSession
        do {
            session = try SpoolSession(
                spool: try Spool.create(at: configuration.spool), worker: nil, redactor: configuration.redactor)
        } catch {
            throw .spool(error)
        }
        return Demo(
            base: base, archive: archive, coach: coach, downPort: downPort, configFile: configFile,
            configuration: configuration, session: session)
    }

    /// Drops files as a script would, each whole under its name at once.
    private static func dropRecords(into session: SpoolSession, _ output: Output) throws(CLIError) {
        func drop(_ text: String, as name: FileName) throws(CLIError) {
            do {
                try session.commit(
                    Transition(newFiles: [.init(Array(text.utf8), as: name, in: .state(.queued), replacing: false)]))
            } catch {
                throw .spool(error)
            }
        }
        output.line("== dropping records into spool/queued/ (tmp/ then rename, as a script would)")
        let records = [
            #"{"id":"sleep-2026-11-29","kind":"sleep","time":"2026-11-29T23:10:00Z","data":{"minutes":452,"score":81}}"#,
            #"{"id":"sleep-2026-11-30","kind":"sleep","time":"2026-11-30T22:55:00Z","data":{"minutes":431,"score":77}}"#,
            #"{"id":"w-2026-11-30-0700","kind":"workout","time":"2026-11-30T07:00:00Z","data":{"type":"run","km":8.2}}"#,
            #"{"id":"w-2026-11-30-1800","kind":"workout","time":"2026-11-30T18:00:00Z","data":{"type":"strength","minutes":45}}"#,
        ]
        for (index, record) in records.enumerated() {
            let name = FileName("export-\(index + 1).json")
            try drop(record, as: name)
            output.line("  queued/\(name)")
        }
        let broken = #"{"kind":"sleep","data":{"minutes":400}}"#
        try drop(broken, as: FileName("broken.json"))
        output.line("  queued/broken.json   (no id: it will need attention)")
        output.line()
    }

    /// What the round did, seen the ways a person would look at it.
    private static func show(_ demo: Demo, _ invocation: Invocation) {
        let output = invocation.output
        let (spool, configuration, base, configFile) = (demo.spool, demo.configuration, demo.base, demo.configFile)
        let prefix = ["--config", configFile]
        output.line("== courier status")
        _ = CourierCommandLine.run(prefix + ["status"], environment: invocation.environment)
        output.line()
        // What follows only shows the demo's results; a folder or file that
        // cannot be read is shown empty rather than ending the tour.
        output.line("== the spool (ls spool/*/)")
        for state in SpoolState.attentionFirst {
            let names = (try? spool.directory(state).sortedNames()) ?? []
            output.line("\(state.rawValue)/")
            for name in names { output.line("  \(name)") }
        }
        output.line()
        output.line("== the ledger (spool/ledger/\(Timestamp.now().utcDay).tsv)")
        if let ledger = try? String(
            contentsOfFile: configuration.spool + "/ledger/\(Timestamp.now().utcDay).tsv", encoding: .utf8)
        {
            output.line(ledger.trimmingCharacters(in: .newlines))
        }
        output.line()
        output.line("== what the archive sink stored (sink-archive/new/)")
        let stored = (try? FileManager.default.contentsOfDirectory(atPath: base + "/sink-archive/new")) ?? []
        for name in stored.sorted() { output.line("  \(name)") }
        output.line()
        output.line("== courier why sleep-2026-11-29@legacy")
        _ = CourierCommandLine.run(prefix + ["why", "sleep-2026-11-29@legacy"], environment: invocation.environment)
        output.line()
        output.line("The demo left everything in \(base). Try:")
        output.line("  courier --config \(configFile) list")
        output.line(
            "  courier --config \(configFile) resend sleep-2026-11-29@legacy   # legacy is still down: it comes back")
        output.line("  awk -F'\\t' '{print $5}' \(configuration.spool)/ledger/*.tsv | sort | uniq -c")
    }

    private static func startSink(at directory: String) throws(CLIError) -> HTTPServer {
        let sink: Sink
        do { sink = try Sink(directory: directory) } catch { throw .spool(SpoolError(error)) }
        do {
            let server = try HTTPServer(handler: sink.handle)
            server.start()
            return server
        } catch {
            throw .io(error.description)
        }
    }

    private static func freePort() throws(CLIError) -> UInt16 {
        do {
            let probe = try HTTPServer(handler: { _ in .reset })
            let port = probe.port
            probe.stop()
            return port
        } catch {
            throw .io(error.description)
        }
    }
}
