// swift-tools-version:6.0
import PackageDescription

// The targets follow a record's path, each depending only on those before
// it (docs/architecture.md walks one record through them; a dependency
// cycle is a compile error). Names sit below the disk: the records and the
// configuration never see the spool, the transport neither, and the
// reference sink sees neither the spool nor courier's names.
//
//   CourierPosix → CourierIdentifiers → CourierRecords → CourierConfig → CourierTransport ─┐
//   CourierPosix → CourierSupport ───────────↑──────────────↑                                │
//   CourierIdentifiers, CourierSupport → CourierSpool ────────────────────────────────────┴→ CourierTokens
//   CourierTokens → CourierRound ─┐
//                 → CourierCatalog ┴→ CourierOperations ─┐
//   CourierRecords, CourierSupport → CourierSink ─────────┴→ CourierCLI → courier
let package = Package(
    name: "courier",
    products: [
        .executable(name: "courier", targets: ["courier"])
    ],
    targets: [
        // C libraries: a module map and `static inline` shims for variadics; no logic.
        // libcurl alone is loaded when a transfer first needs it (dlopen, behind
        // typed shims): linking it loaded 37 libraries into every command.
        .target(name: "CCurl"),
        .systemLibrary(name: "CINIH", pkgConfig: "inih", providers: [.apt(["libinih-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Declarations glibc keeps behind _GNU_SOURCE (syncfs); no library.
        .systemLibrary(name: "CPosix"),

        // System calls: errno read at once, descriptors, directory handles, the fault seam.
        .target(name: "CourierPosix", dependencies: ["CPosix"]),
        // The project's names and their byte rules: record ids, delivery keys, subscriber and
        // catalog names, entry names, worker ids, NameBytes. Below the spool, so that what
        // needs only names (records, the configuration) does not see the disk.
        .target(name: "CourierIdentifiers", dependencies: ["CourierPosix"]),
        // Small pure helpers: units, time formats, digests, gzip, signing, redaction.
        .target(name: "CourierSupport", dependencies: ["CourierPosix", "CCrypto", "CZlib"]),
        // The spool: states, the checked read, the ledger, and the one way to change it: a
        // SpoolSession's commit of a Transition.
        .target(name: "CourierSpool", dependencies: ["CourierIdentifiers", "CourierSupport"]),
        // Records: JSON validation and byte-exact splicing.
        .target(name: "CourierRecords", dependencies: ["CourierIdentifiers", "CourierSupport"]),
        // The configuration file and its secrets.
        .target(name: "CourierConfig", dependencies: ["CourierRecords", "CourierSupport", "CINIH"]),
        // HTTP through libcurl: one place for TLS, redirects, timeouts and headers. It knows
        // nothing of the spool (TargetBoundaryTests).
        .target(name: "CourierTransport", dependencies: ["CourierConfig", "CCurl"]),
        // OAuth tokens of a round or a catalog sync: fetched through the transport, kept in
        // `.courier/` by a commit of the spool session.
        .target(name: "CourierTokens", dependencies: ["CourierTransport", "CourierSpool"]),
        // One round, in stages: recovery, routes, delivery with intake as it meets dropped
        // files (then routes again), the group commit, notify.
        .target(name: "CourierRound", dependencies: ["CourierTokens"]),
        // Catalog syncs, the other direction of the sync side.
        .target(name: "CourierCatalog", dependencies: ["CourierTokens"]),
        // The reference receiver (`courier sink`): a server of its own, and a test oracle, so it
        // judges keys and ids by its own rules: nothing of courier's delivery side, only the
        // system calls, the helpers and the JSON scanner (TargetBoundaryTests holds it so).
        .target(name: "CourierSink", dependencies: ["CourierRecords", "CourierSupport"]),
        // What people do to a spool: list, ack, resend, copy, backfill, prune, metrics.
        .target(name: "CourierOperations", dependencies: ["CourierRound", "CourierCatalog"]),
        // The command line: arguments, commands, messages and exit codes.
        .target(name: "CourierCLI", dependencies: ["CourierOperations", "CourierSink"]),
        .executableTarget(name: "courier", dependencies: ["CourierCLI"]),

        .testTarget(
            name: "CourierTests",
            dependencies: [
                "CourierPosix", "CourierIdentifiers", "CourierSupport", "CourierSpool", "CourierRecords",
                "CourierConfig", "CourierTransport", "CourierTokens", "CourierRound", "CourierCatalog", "CourierSink",
                "CourierOperations", "CourierCLI",
            ]),
    ]
)
