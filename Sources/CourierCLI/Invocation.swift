import CourierConfig
import CourierOperations
import CourierSpool
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

    /// On a shared spool the handle is this worker's: its ledger lines go
    /// to its own day files (`YYYY-MM-DD.WORKER.tsv`).
    func openSpool() throws(CLIError) -> Spool {
        let path = try spoolLocation()
        do {
            let spool = try Spool(path: path)
            if let worker = (try? configurationIfAny(readingSecrets: false))??.worker { try spool.join(as: worker) }
            return spool
        } catch {
            throw .spool(error)
        }
    }

    /// Rewrites `metrics-file` after a command moved items, so the file
    /// never lags behind the spool until the next round. Failing to is a
    /// warning: the command did its work.
    func refreshMetrics(_ configuration: Configuration?, spool: Spool) {
        guard let configuration, let path = configuration.metricsFile else { return }
        do {
            try MetricsFile(path: path, spool: spool, configuration: configuration).refresh()
        } catch {
            output.error("warning: metrics-file: \(error)")
        }
    }
}
