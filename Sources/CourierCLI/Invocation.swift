import CourierConfig
import CourierIdentifiers
import CourierOperations
import CourierPosix
import CourierSpool
import CourierSupport
import Foundation
import Glibc

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
        let spool: Spool
        do { spool = try Spool(path: path) } catch { throw .spool(error) }
        try Self.refuseRoot(on: spool)
        do {
            return try SpoolSession(
                spool: spool, worker: configuration?.worker, redactor: configuration?.redactor ?? Redactor(), log: log)
        } catch {
            throw .spool(error)
        }
    }

    /// Root may read any spool, but what it writes to one another user owns
    /// (the day's ledger file, a hold, a catalog folder) is root's, 0640,
    /// and that user's rounds could not open it: every round would fail
    /// until midnight. `sudo courier hold alpha` is easy to type.
    static func refuseRoot(on spool: Spool) throws(CLIError) {
        guard geteuid() == 0 else { return }
        let owner: uid_t
        do { owner = try spool.root.owner().user } catch { throw .spool(SpoolError(error)) }
        guard owner != 0 else { return }
        let user = Accounts.userName(owner) ?? String(owner)
        throw .usage(
            "\(spool.path) is \(user)'s spool: run this command as \(user) (sudo -u \(user) courier …); "
                + "as root it would make files that \(user)'s rounds cannot open")
    }

    /// The intake folders alone (`SpoolInbox`), for `enqueue`: all a member
    /// of the spool's producers group may open.
    func openInbox(_ configuration: Configuration) throws(CLIError) -> SpoolInbox {
        do { return try SpoolInbox(path: configuration.spool) } catch { throw .enqueue(error) }
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
