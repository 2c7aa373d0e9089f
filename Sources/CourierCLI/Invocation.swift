import CourierConfig
import CourierIdentifiers
import CourierOperations
import CourierSpool
import CourierSupport
import Foundation

/// What every command shares: the global options and how they find the
/// configuration and the spool.
struct Invocation {
    var configPath: String?
    var spoolPath: String?
    let environment: [String: String]
    var output = Output()
    var quiet = false
    var verbose = false

    init(environment: [String: String]) {
        self.environment = environment
        output.journal = Logging.stderrIsJournal(environment)
    }

    var log: EventLog { Logging.eventLog(quiet: quiet, verbose: verbose, journal: output.journal) }

    /// The configuration, located by the rules of docs/design.md §5.
    func configuration(readingSecrets: Bool) throws(CLIError) -> Configuration {
        var configuration: Configuration
        do {
            let file = try Configuration.locate(explicit: configPath, environment: environment)
            configuration = try Configuration.load(file: file, readingSecrets: readingSecrets)
        } catch {
            throw .config(error)
        }
        if let spoolPath { configuration.spool = spoolPath }
        // Several workers on one host share a configuration file; each
        // unit instance names itself (`Environment=COURIER_WORKER_ID=%H-%i`).
        if let worker = environment["COURIER_WORKER_ID"], configuration.shared {
            if let problem = WorkerID.problem(with: worker) {
                throw .usage("COURIER_WORKER_ID `\(worker)` is not a worker id: \(problem)")
            }
            configuration.workerName = worker
        }
        return configuration
    }

    /// The configuration, or nil when no file is found at all (a command
    /// that can work on `--spool` alone); any other fault is thrown.
    func configurationIfAny(readingSecrets: Bool) throws(CLIError) -> Configuration? {
        do {
            return try configuration(readingSecrets: readingSecrets)
        } catch .config(.notFound) {
            return nil
        }
    }

    /// The spool: `--spool`, else the configuration's.
    func spoolLocation() throws(CLIError) -> String {
        if let spoolPath { return spoolPath }
        return try configuration(readingSecrets: false).spool
    }

    /// The spool of a command that only reads it: never joined as a worker,
    /// so it creates nothing and changes nothing (a plain `Spool` cannot).
    func readSpool() throws(CLIError) -> Spool {
        let path = try spoolLocation()
        do { return try Spool(path: path) } catch { throw .spool(error) }
    }

    /// The one session of a command that changes the spool. On a shared
    /// spool it is this process's worker, so its lines go to the worker's
    /// own day files (`YYYY-MM-DD.WORKER.tsv`) and its serial lock is real;
    /// every line passes the configuration's redactor. `configuration` is
    /// nil only when no file exists and `--spool` names the spool.
    func openSession(_ configuration: Configuration?) throws(CLIError) -> SpoolSession {
        let path: String
        if let configuration { path = configuration.spool } else { path = try spoolLocation() }
        do {
            return try SpoolSession(
                path: path, worker: configuration?.worker, redactor: configuration?.redactor ?? Redactor(), log: log)
        } catch {
            throw .spool(error)
        }
    }

    /// The intake folders alone (`SpoolInbox`), for `enqueue`: all a member
    /// of the spool's producers group may open.
    func openInbox(_ configuration: Configuration) throws(CLIError) -> SpoolInbox {
        do { return try SpoolInbox(path: configuration.spool) } catch { throw .spool(error) }
    }

    /// Rewrites `metrics-file` after a command moved items, so the file
    /// never lags behind the spool until the next round. Failing to is a
    /// warning: the command did its work.
    func refreshMetrics(_ configuration: Configuration?, session: SpoolSession) {
        guard let configuration, let path = configuration.metricsFile else { return }
        do {
            try MetricsFile(path: path, session: session, configuration: configuration).refresh()
        } catch {
            output.error("warning: metrics-file: \(error)")
        }
    }
}
