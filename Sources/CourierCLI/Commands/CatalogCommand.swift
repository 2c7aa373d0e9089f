import CourierCatalog
import CourierConfig
import CourierIdentifiers
import CourierPosix
import CourierSpool
import Foundation

/// `courier catalog sync [NAME] [--full] [--if-requested]` and
/// `courier catalog status [--json|--output FORMAT]`.
enum CatalogCommand {
    static let command = Command(
        "catalog", summary: "catalog syncs: the server's items into spool/catalogs/NAME/",
        subcommands: [
            Command(
                "sync", summary: "pull catalog deltas page by page into spool/catalogs/NAME/",
                usage: "[NAME] [--full] [--if-requested]",
                details: """
                    Each configured catalog in turn, or NAME alone; a killed sync resumes where it
                    stopped. Any failed sync exits 75. With --if-requested, only when
                    .courier/sync-requested exists (courier-sync-request.path), which is removed after.
                    """,
                options: SyncOptions.fields, operands: .listed([.catalogs]),
                example: "courier catalog sync products --full",
                run: { options, operands, invocation throws(CLIError) in try sync(options, operands, invocation) }),
            Command(
                "status", summary: "each catalog's since, age, failures, last duration, next sync",
                usage: "[NAME] [--json|--output FORMAT]", options: StatusOptions.fields,
                operands: .listed([.catalogs]), example: "courier catalog status --json",
                run: { options, operands, invocation throws(CLIError) in try status(options, operands, invocation) }),
        ])

    struct SyncOptions: CommandOptions {
        var full = false
        var ifRequested = false

        static let fields: [OptionField<SyncOptions>] = [
            .flag("--full", "start from the beginning, and remove what the server no longer has", \.full),
            .flag("--if-requested", "sync only if .courier/sync-requested exists, then remove it", \.ifRequested),
        ]
    }

    struct StatusOptions: CommandOptions {
        var output = OutputForm()

        static let fields: [OptionField<StatusOptions>] = OptionField.json(
            "one JSON object: {\"catalogs\":[…]}", \.output)
    }

    static func status(_ options: StatusOptions, _ operand: CatalogOperand, _ invocation: Invocation)
        throws(CLIError)
    {
        let configuration = try invocation.configuration(readingSecrets: false)
        try status(
            try catalogs(operand.name, in: configuration), spool: invocation.readSpool(), json: options.output.isJSON,
            output: invocation.output)
    }

    static func sync(_ options: SyncOptions, _ operand: CatalogOperand, _ invocation: Invocation) throws(CLIError) {
        let ifRequested = options.ifRequested
        let configuration = try invocation.configuration(readingSecrets: true)
        let session = try invocation.openSession(configuration)
        let request = SyncRequest(session: session)
        if ifRequested {
            let requested: Bool
            do { requested = try request.take() } catch { throw .spool(error) }
            guard requested else {
                invocation.log(.info, "no sync requested (.courier/\(SyncRequest.fileName) is absent)")
                return
            }
        }
        /// A request taken is answered even when there is nothing to sync:
        /// left in place, it would start courier-sync-request.service again
        /// and again.
        func refuse(_ message: String) throws(CLIError) -> Never {
            if ifRequested { do { try request.finish() } catch { throw .spool(error) } }
            throw .usage(message)
        }
        let chosen: [Catalog]
        do { chosen = try catalogs(operand.name, in: configuration) } catch {
            guard case .usage(let message) = error else { throw error }
            try refuse(message)
        }
        defer { invocation.refreshMetrics(configuration, session: session) }
        var failed = false
        for catalog in chosen {
            do {
                let report = try CatalogSync(
                    session: session, configuration: configuration, catalog: catalog, log: invocation.log
                )
                .run(full: options.full)
                invocation.output.line(
                    "catalog \(catalog.name): \(report.full ? "full" : "delta") sync\(report.resumed ? " (resumed)" : "") "
                        + "to \(report.position): \(report.upserts) upserts, \(report.tombstones) tombstones, "
                        + "\(report.pages) pages, \(report.durationMilliseconds) ms"
                        + (report.removedByFullSync > 0 ? ", \(report.removedByFullSync) removed" : ""))
            } catch {
                invocation.output.error("error: \(error)")
                failed = true
            }
        }
        if ifRequested {
            do { try request.finish() } catch { throw .spool(error) }
        }
        if failed { throw .reported(.temporary) }
    }

    /// The catalog NAME, or every one; a usage error when there is none.
    private static func catalogs(_ wanted: SubscriberName?, in configuration: Configuration) throws(CLIError)
        -> [Catalog]
    {
        guard let wanted else {
            guard !configuration.catalogs.isEmpty else {
                throw .usage("no [catalog NAME] in \(configuration.file ?? "the configuration")")
            }
            return configuration.catalogs
        }
        guard let catalog = configuration.catalog(named: wanted) else {
            throw .usage("no [catalog \(wanted)] in \(configuration.file ?? "the configuration")")
        }
        return [catalog]
    }

    static func status(_ catalogs: [Catalog], spool: Spool, json: Bool, output: Output) throws(CLIError) {
        let now = Timestamp.now()
        var rows: [[String]] = []
        var objects: [CatalogJSON] = []
        for catalog in catalogs {
            let state: CatalogState
            do { state = try CatalogState.load(catalog.name, in: spool) } catch { throw .spool(error) }
            let age = state.lastSuccess.flatMap(Timestamp.init(rfc3339:)).map { Age.describe(now - $0) } ?? "never"
            let next = CatalogSync.nextIsFull(state, cursor: catalog.cursor(resuming: state)) ? "full" : "delta"
            rows.append([
                catalog.name.value, state.since?.description ?? "-", age, String(state.failures),
                state.lastDurationMilliseconds.map { "\($0)ms" } ?? "-", next,
                state.syncing != nil ? "interrupted" : "",
            ])
            objects.append(CatalogJSON(catalog, state))
        }
        if json {
            output.json(CatalogsJSON(catalogs: objects))
            return
        }
        if output.isTerminal { rows.insert(["CATALOG", "SINCE", "AGE", "FAILURES", "DURATION", "NEXT", ""], at: 0) }
        output.table(rows)
    }
}
