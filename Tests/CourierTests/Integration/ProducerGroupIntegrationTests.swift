import Foundation
import Glibc
import Testing

/// A spool that other users write to (`courier init --group`): a courier
/// user, a producer in the producers group, and real rounds between them.
@Suite(.serialized, .tags(.integration)) struct ProducerGroupTests {
    @Test(
        "a member of the producers group drops records and runs enqueue under any umask, and sees nothing else",
        .asRoot("adds users and a group"), .needs("runuser", "useradd", "groupadd"))
    func producersDropAndCourierDeliversWhatTheyDropped() throws {
        let producers = try TemporaryAccount(.group, label: "prod")
        let owner = try TemporaryAccount(.user, label: "own")
        let producer = try TemporaryAccount(.user, label: "alice")
        try producers.add(owner)
        try producers.add(producer)
        let place = TemporaryDirectory("producers")
        chmod(place.path, 0o755)
        // A copy the other users may run wherever the repository lives.
        let binary = place.path + "/courier"
        try FileManager.default.copyItem(atPath: try CourierBinary.locate().path, toPath: binary)
        let spool = place.path + "/spool"
        let metrics = place.path + "/metrics"
        for directory in [spool, metrics] {
            #expect(
                try Shell.run(["install", "-d", "-o", owner.name, "-g", owner.name, "-m", "0750", directory]).status
                    == 0)
        }
        let alpha = try LoopbackServer(status: 201)
        let beta = try LoopbackServer(status: 500)
        try place.write(
            """
            [courier]
            spool = \(spool)
            settle = 0s
            metrics-file = \(metrics)/courier.prom
            [subscriber alpha]
            url = \(alpha.url)
            kinds = sleep
            [subscriber beta]
            url = \(beta.url)
            kinds = workout
            retry-schedule = 1h
            """, to: "courier.conf")
        chmod(place.path + "/courier.conf", 0o644)
        let config = place.path + "/courier.conf"

        let initialised = try owner.run("\(binary) --spool \(spool) init --group \(producers.name)", umask: "0027")
        #expect(initialised.status == 0, "\(initialised.output)")
        #expect(initialised.output.contains("open to group \(producers.name)"), "\(initialised.output)")
        #expect(!initialised.output.contains("warning"), "\(initialised.output)")
        for folder in ["tmp", "queued"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: spool + "/" + folder)
            #expect(attributes[.groupOwnerAccountName] as? String == producers.name)
            #expect(attributes[.posixPermissions] as? Int == 0o3770, "\(folder)")
        }

        // enqueue under the strictest umask still leaves courier a file it
        // may read; a plain cp + mv under 0022 too; under 0077 cp makes a
        // file only its writer may read, which intake flags.
        let enqueued = try producer.run(
            "echo '{\"id\":\"p-1\",\"kind\":\"sleep\"}' | \(binary) --config \(config) enqueue -", umask: "0077")
        #expect(enqueued.status == 0, "\(enqueued.output)")
        #expect(
            !enqueued.output.contains("warning"),
            "a producer's enqueue leaves the metrics to the round: \(enqueued.output)")
        let copied = try producer.run(
            "echo '{\"id\":\"p-2\",\"kind\":\"workout\"}' > \(spool)/tmp/p2.json && mv \(spool)/tmp/p2.json \(spool)/queued/",
            umask: "0022")
        #expect(copied.status == 0, "\(copied.output)")
        let secret = try producer.run(
            "echo '{\"id\":\"p-3\",\"kind\":\"sleep\"}' > \(spool)/tmp/p3.json && mv \(spool)/tmp/p3.json \(spool)/queued/",
            umask: "0077")
        #expect(secret.status == 0, "\(secret.output)")
        // Nothing else of the spool is the producer's to see.
        for closed in ["", "/sent", "/ledger", "/.courier"] {
            #expect(try producer.run("ls \(spool)\(closed)", umask: "0022").status != 0, "ls \(spool)\(closed)")
        }

        let round = try owner.run("\(binary) --config \(config) run", umask: "0027")
        #expect(round.status == 0, "\(round.output)")
        #expect(FileManager.default.fileExists(atPath: spool + "/sent/p-1@alpha.json"), "\(round.output)")
        #expect(alpha.requests.count == 1 && beta.requests.count == 1)
        // beta's entry was the producer's own file, renamed by intake; its
        // deferral stamp needs the owner, so courier put its own copy there.
        let deferred = try FileManager.default.attributesOfItem(atPath: spool + "/queued/p-2@beta.json")
        #expect(deferred[.ownerAccountName] as? String == owner.name)
        let flagged = try FileManager.default.contentsOfDirectory(atPath: spool + "/needsAttention")
        #expect(flagged.count == 1 && flagged.first?.hasSuffix("-p3.json") == true, "\(flagged)")
        let ledger = try String(
            contentsOfFile: spool + "/ledger/"
                + (try FileManager.default.contentsOfDirectory(atPath: spool + "/ledger")
                    .sorted().last ?? ""),
            encoding: .utf8)
        #expect(ledger.contains("\tp-2\tdeferred\t"), "\(ledger)")
        #expect(ledger.contains("unreadable: Permission denied (dropped as p3.json)"), "\(ledger)")
        // Sticky: a producer removes only its own files, never courier's.
        #expect(try producer.run("rm -f \(spool)/queued/p-2@beta.json", umask: "0022").status != 0)
        #expect(FileManager.default.fileExists(atPath: spool + "/queued/p-2@beta.json"))
        #expect(FileManager.default.fileExists(atPath: metrics + "/courier.prom"), "the round wrote the metrics")
    }
}
