import CourierCatalog
import CourierConfig
import CourierPosix
import CourierSpool
import Foundation

/// `courier catalog sync [NAME] [--full] [--if-requested]` and
/// `courier catalog status [--json]`.
enum CatalogCommand {
    static func run(_ arguments: inout Arguments, _ invocation: Invocation) throws(CLIError) {
        let full = arguments.flag("--full")
        let ifRequested = arguments.flag("--if-requested")
        let json = arguments.flag("--json")
        let rest = try arguments.positionals()
        guard let action = rest.first, ["sync", "status"].contains(action), rest.count <= 2 else {
            throw .usage("catalog sync [NAME] [--full] [--if-requested] | catalog status [--json]")
        }
        let configuration = try invocation.configuration(readingSecrets: action == "sync")
        let spool: Spool
        do { spool = try Spool(path: configuration.spool) } catch { throw .spool(error) }
        var catalogs = configuration.catalogs
        if rest.count == 2 {
            guard let name = SubscriberName(rest[1]), let catalog = configuration.catalog(named: name) else {
                throw .usage("no [catalog \(rest[1])] in \(configuration.file ?? "the configuration")")
            }
            catalogs = [catalog]
        }
        guard !catalogs.isEmpty else {
            throw .usage("no [catalog NAME] in \(configuration.file ?? "the configuration")")
        }
        if action == "status" {
            try status(catalogs, spool: spool, json: json, output: invocation.output)
            return
        }
        let request = SyncRequest(spool: spool)
        if ifRequested {
            let requested: Bool
            do { requested = try request.take() } catch { throw .spool(error) }
            guard requested else {
                invocation.log(.info, "no sync requested (.courier/\(SyncRequest.fileName) is absent)")
                return
            }
        }
        defer { invocation.refreshMetrics(configuration, spool: spool) }
        var failed = false
        for catalog in catalogs {
            do {
                let report = try CatalogSync(
                    spool: spool, configuration: configuration, catalog: catalog, log: invocation.log
                )
                .run(full: full)
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

    static func status(_ catalogs: [Catalog], spool: Spool, json: Bool, output: Output) throws(CLIError) {
        let now = Timestamp.now()
        var rows: [[String]] = []
        var objects: [[String: Any]] = []
        for catalog in catalogs {
            let state: CatalogState
            do { state = try CatalogState.load(catalog.name, in: spool) } catch { throw .spool(error) }
            let age = state.lastSuccess.flatMap(Timestamp.init(rfc3339:)).map { Age.describe(now - $0) } ?? "never"
            let next =
                state.failures >= CatalogSync.failuresBeforeFullSync ? "full" : state.since == nil ? "full" : "delta"
            rows.append([
                catalog.name.value, state.since?.description ?? "-", age, String(state.failures),
                state.lastDurationMilliseconds.map { "\($0)ms" } ?? "-", next,
                state.syncing != nil ? "interrupted" : "",
            ])
            objects.append([
                "catalog": catalog.name.value, "since": state.since?.jsonValue ?? NSNull(),
                "version": state.completeVersion ?? NSNull(),
                "lastSuccess": state.lastSuccess ?? NSNull(),
                "failures": state.failures, "lastDurationMs": state.lastDurationMilliseconds ?? NSNull(),
                "nextSync": next, "interrupted": state.syncing != nil, "lastError": state.lastError ?? NSNull(),
            ])
        }
        if json {
            if let data = try? JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys]) {
                output.line(String(decoding: data, as: UTF8.self))
            }
            return
        }
        if output.isTerminal { rows.insert(["CATALOG", "SINCE", "AGE", "FAILURES", "DURATION", "NEXT", ""], at: 0) }
        output.table(rows)
    }

}
