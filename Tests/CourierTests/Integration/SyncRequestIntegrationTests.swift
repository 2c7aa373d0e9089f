import Foundation
import Glibc
import Testing

@testable import CourierCatalog
@testable import CourierConfig
@testable import CourierOperations
@testable import CourierPosix
@testable import CourierRecords
@testable import CourierRound
@testable import CourierSink
@testable import CourierSpool
@testable import CourierSupport
@testable import CourierTransport

/// `.courier/sync-requested`: a sync the server asks for, served by
/// `catalog sync --if-requested` and the shipped courier-sync-request units.
@Suite(.serialized, .tags(.integration)) struct SyncRequestTests {
    struct Setup {
        let directory: TemporaryDirectory
        let spool: TemporarySpool
        let server: LoopbackServer
        let config: String

        var request: String { spool.path + "/.courier/sync-requested" }
        var taken: String { spool.path + "/.courier/sync-requested.taken" }
        var pageRequests: Int { server.requests.filter { $0.method == "GET" }.count }
    }

    static func setUp(gate: RequestGate? = nil) throws -> Setup {
        let (directory, spool, server, _) = try CatalogTests.setUp(count: 300, pageSize: 100, gate: gate)
        let catalog = spool.configuration.catalogs[0]
        try directory.write(
            "[courier]\nspool = \(spool.path)\ndevice-id = pushed\n"
                + "[subscriber sink]\nurl = http://\(server.server.address)/in\n"
                + "[catalog products]\nurl = \(catalog.url)\npage-size = 100\nack-url = \(catalog.ackURL ?? "")\n",
            to: "courier.conf")
        return Setup(directory: directory, spool: spool, server: server, config: directory.path + "/courier.conf")
    }

    static func touch(_ path: String) {
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
    }

    @Test("with no request, catalog sync --if-requested fetches nothing")
    func nothingRequestedNothingFetched() throws {
        let setup = try Self.setUp()
        let result = try CourierBinary.locate().run(["--config", setup.config, "catalog", "sync", "--if-requested"])
        #expect(result.status == 0, "\(result.error)")
        #expect(setup.pageRequests == 0)
    }

    @Test("a request is served by one sync and then removed")
    func aRequestIsServedAndRemoved() throws {
        let setup = try Self.setUp()
        Self.touch(setup.request)
        let result = try CourierBinary.locate().run(["--config", setup.config, "catalog", "sync", "--if-requested"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("300 upserts"))
        #expect(!FileManager.default.fileExists(atPath: setup.request))
        #expect(!FileManager.default.fileExists(atPath: setup.taken))
        #expect(try CatalogTests.local(setup.spool).count == 300)
    }

    @Test("a request made while a sync runs is kept for the next one")
    func aRequestDuringTheSyncIsKept() throws {
        let gate = RequestGate()
        gate.hold(after: 2)
        let setup = try Self.setUp(gate: gate)
        Self.touch(setup.request)
        let process = try CourierBinary.locate().start([
            "--config", setup.config, "catalog", "sync", "--if-requested",
        ])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(gate.waitUntilHolding(), "the sync never asked for page two")
        #expect(!FileManager.default.fileExists(atPath: setup.request), "the request was taken before the sync")
        Self.touch(setup.request)
        gate.open()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(FileManager.default.fileExists(atPath: setup.request), "the second request was removed unserved")
        #expect(!FileManager.default.fileExists(atPath: setup.taken))
    }

    @Test("a request a crash left taken is served by the next run")
    func aTakenRequestIsServed() throws {
        let setup = try Self.setUp()
        Self.touch(setup.taken)
        let result = try CourierBinary.locate().run(["--config", setup.config, "catalog", "sync", "--if-requested"])
        #expect(result.status == 0, "\(result.error)")
        #expect(setup.pageRequests == 3)
        #expect(!FileManager.default.fileExists(atPath: setup.taken))
    }

    @Test("a failed sync still removes the request, exits 75 and leaves the failure in the ledger")
    func aFailedSyncRemovesTheRequest() throws {
        let setup = try Self.setUp()
        try setup.directory.write(
            "[courier]\nspool = \(setup.spool.path)\n[catalog products]\nurl = http://127.0.0.1:9/none\n",
            to: "broken.conf")
        Self.touch(setup.request)
        let result = try CourierBinary.locate().run([
            "--config", setup.directory.path + "/broken.conf", "catalog", "sync", "--if-requested",
        ])
        #expect(result.status == 75, "\(result.output) \(result.error)")
        #expect(!FileManager.default.fileExists(atPath: setup.request))
        #expect(try setup.spool.ledger().contains { $0.event == .catalogFailed })
    }

    /// The shipped units, run as systemd would run them: the path unit
    /// watches the request file, and the service's ExecStart lines (in
    /// order, a leading `-` ignoring failure) sync and then deliver.
    @Test("the shipped units watch the request file, sync, remove it and run a round")
    func theShippedUnitsServeARequest() throws {
        let setup = try Self.setUp()
        let units = Shell.repository + "/etc/systemd/"
        let path = try String(contentsOfFile: units + "courier-sync-request.path", encoding: .utf8)
        #expect(path.contains("\nPathExists=/var/spool/courier/.courier/\(SyncRequest.fileName)\n"))
        #expect(path.contains("\nUnit=courier-sync-request.service\n"))
        let service = try String(contentsOfFile: units + "courier-sync-request.service", encoding: .utf8)
        let commands = service.split(separator: "\n").filter { $0.hasPrefix("ExecStart=") }
            .map { String($0.dropFirst("ExecStart=".count)) }
        #expect(commands.count == 2)

        try setup.spool.dropRecord(id: "pushed-1")
        Self.touch(setup.request)
        let binary = try CourierBinary.locate()
        for command in commands {
            let ignoresFailure = command.hasPrefix("-")
            var words = (ignoresFailure ? String(command.dropFirst()) : command).split(separator: " ").map(String.init)
            #expect(words.removeFirst() == "/usr/bin/courier")
            let result = try binary.run(["--config", setup.config] + words)
            #expect(ignoresFailure || result.status == 0, "\(command): \(result.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: setup.request))
        #expect(try CatalogTests.local(setup.spool).count == 300)
        #expect(try setup.spool.ledger().contains { $0.event == .sent && $0.key.hasPrefix("pushed-1") })
    }

    @Test("a request that is a directory is served and removed, and the next request is served too")
    func aDirectoryRequestIsRemoved() throws {
        let setup = try Self.setUp()
        try FileManager.default.createDirectory(atPath: setup.request, withIntermediateDirectories: false)
        let binary = try CourierBinary.locate()
        let first = try binary.run(["--config", setup.config, "catalog", "sync", "--if-requested"])
        #expect(first.status == 0, "\(first.error)")
        #expect(!FileManager.default.fileExists(atPath: setup.request))
        #expect(!FileManager.default.fileExists(atPath: setup.taken), "left taken, it blocks every later request")

        Self.touch(setup.request)
        let second = try binary.run(["--config", setup.config, "catalog", "sync", "--if-requested"])
        #expect(second.status == 0, "\(second.error)")
        #expect(!FileManager.default.fileExists(atPath: setup.request), "the path unit would start again and again")
        #expect(setup.pageRequests == 4, "the first sync fetched 3 pages, the second 1")
    }

    @Test(
        "with no catalog configured a request is removed, so the path unit does not start the service again and again")
    func aRequestWithoutCatalogsIsRemoved() throws {
        let setup = try Self.setUp()
        try setup.directory.write(
            "[courier]\nspool = \(setup.spool.path)\n[subscriber sink]\nurl = http://127.0.0.1:9/in\n",
            to: "no-catalogs.conf")
        let config = setup.directory.path + "/no-catalogs.conf"
        let binary = try CourierBinary.locate()
        let idle = try binary.run(["--config", config, "catalog", "sync", "--if-requested"])
        #expect(idle.status == 0, "without a request it exits 0: \(idle.error)")

        Self.touch(setup.request)
        let result = try binary.run(["--config", config, "catalog", "sync", "--if-requested"])
        #expect(result.status == 64 && result.error.contains("no [catalog NAME]"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: setup.request))
        #expect(!FileManager.default.fileExists(atPath: setup.taken))
    }
}
