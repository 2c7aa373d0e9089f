import Foundation
import Glibc
import Testing

/// Exit statuses a producer script can act on (sysexits.h), from the
/// built binary: 65 bad data, 66 a missing input file, 73 a spool that
/// cannot take the record, 77 permission denied.
@Suite(.serialized, .tags(.integration)) struct ExitCodeTests {
    static func setUp(spool: String = "spool", in directory: TemporaryDirectory = TemporaryDirectory("exit"))
        throws -> (TemporaryDirectory, CourierBinary, String)
    {
        try directory.write(
            "[courier]\nspool = \(spool)\nsettle = 0s\n[subscriber alpha]\nurl = http://127.0.0.1:9/\n",
            to: "courier.conf")
        return (directory, try CourierBinary.locate(), directory.path + "/courier.conf")
    }

    @Test("enqueue of a file that is not there exits 66 naming it; a bad record beside it does not hide that")
    func aMissingInputFileIs66() throws {
        let (directory, binary, config) = try Self.setUp()
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        try directory.write(#"{"kind":"sleep"}"#, to: "no-id.json")
        let missing = try binary.run(["--config", config, "enqueue", directory.path + "/nope.json"])
        #expect(missing.status == 66, "\(missing.error)")
        #expect(
            missing.error.contains("unable to read \(directory.path)/nope.json: No such file or directory"),
            "\(missing.error)")
        let both = try binary.run([
            "--config", config, "enqueue", directory.path + "/no-id.json", directory.path + "/nope.json",
        ])
        #expect(both.status == 66, "\(both.error)")
        let bad = try binary.run(["--config", config, "enqueue", directory.path + "/no-id.json"])
        #expect(bad.status == 65, "only bad data is 65: \(bad.error)")
    }

    @Test("enqueue reads no more of its input than max-record-size and a byte: `yes | courier enqueue` ends")
    func anEndlessInputIsNotReadToTheEnd() throws {
        let (directory, binary, config) = try Self.setUp()
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        // 300 MB into a pipe: the writer fails (SIGPIPE, or EPIPE where
        // the signal is ignored) when courier stops reading, and finishes
        // (0) only if courier read it all.
        let result = try Shell.run(
            [
                "bash", "-c",
                "dd if=/dev/zero bs=1M count=300 status=none | \(binary.path) --config \(config) enqueue -;"
                    + " echo \"${PIPESTATUS[*]}\"",
            ], in: directory.path)
        let statuses = result.output.split(separator: "\n").last?.split(separator: " ") ?? []
        #expect(statuses.count == 2 && statuses.first != "0" && statuses.last == "65", "\(result.output)")
        #expect(result.output.contains("more than max-record-size"), "\(result.output)")
    }

    @Test("enqueue into a spool that does not exist exits 73, and creates nothing")
    func aMissingSpoolIs73() throws {
        let (directory, binary, config) = try Self.setUp(spool: "nowhere")
        let result = try binary.run(["--config", config, "enqueue", "-"], input: #"{"id":"a","kind":"sleep"}"#)
        #expect(result.status == 73, "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/nowhere"))
    }

    /// An initialised spool at `DIRECTORY/spool` (its path in full: another
    /// user runs courier from /), with a copy of the binary and the
    /// configuration that every user may read.
    static func initForStrangers(_ label: String) throws -> (TemporaryDirectory, copy: String, config: String) {
        let directory = TemporaryDirectory(label)
        let (_, binary, config) = try setUp(spool: directory.path + "/spool", in: directory)
        chmod(directory.path, 0o755)
        chmod(config, 0o644)
        let copy = directory.path + "/courier"
        try FileManager.default.copyItem(atPath: binary.path, toPath: copy)
        let made = try binary.run(["--config", config, "init"])
        guard made.status == 0 else { throw TestFailure("courier init: \(made.error)") }
        return (directory, copy, config)
    }

    @Test(
        "a user who may not write the spool gets 77 and `Permission denied` from enqueue and status, not `run courier init`",
        .asRoot("runs courier as another user"), .needs("runuser", "useradd"))
    func permissionDeniedIs77() throws {
        let stranger = try TemporaryAccount(.user, label: "strg")
        let (directory, copy, config) = try Self.initForStrangers("exit")
        withExtendedLifetime(directory) {}
        let enqueued = try stranger.run(
            "echo '{\"id\":\"s-1\",\"kind\":\"sleep\"}' | \(copy) --config \(config) enqueue -", umask: "0022")
        #expect(enqueued.status == 77, "\(enqueued.output)")
        #expect(enqueued.output.contains("Permission denied"), "\(enqueued.output)")
        let status = try stranger.run("\(copy) --config \(config) status", umask: "0022")
        #expect(status.status == 77, "\(status.output)")
        #expect(status.output.contains("Permission denied"), "\(status.output)")
        #expect(!status.output.contains("courier init`)"), "\(status.output)")
    }
}

/// The serial lock's turnstile (`serial.turnstile`) is for fairness
/// between workers only: a person who may move entries and write
/// `serial.lock`, but not create files in `.courier/`, still moves them.
@Suite(.serialized, .tags(.integration)) struct TurnstileAccessTests {
    /// A spool a stranger may write everywhere but in `.courier/`, with
    /// `serial.lock` theirs to write and one entry in `needsAttention/`.
    static func setUp() throws -> (TemporaryDirectory, String, String, String) {
        let (directory, copy, config) = try ExitCodeTests.initForStrangers("turn")
        let spool = directory.path + "/spool"
        try Data(#"{"id":"a-1","kind":"sleep"}"#.utf8).write(
            to: URL(fileURLWithPath: spool + "/needsAttention/a-1@alpha.json"))
        let opened = try Shell.run([
            "sh", "-c",
            ": > \(spool)/.courier/serial.lock && rm -f \(spool)/.courier/serial.turnstile"
                + " && chmod -R a+rwX \(spool) && chmod 755 \(spool)/.courier",
        ])
        #expect(opened.status == 0, "\(opened.output)")
        return (directory, spool, copy, config)
    }

    @Test(
        "a person who may not create the turnstile in .courier/ still acks, and creates nothing there",
        .asRoot("runs courier as another user"), .needs("runuser", "useradd"))
    func aTurnstileThatCannotBeCreatedIsDoneWithout() throws {
        let stranger = try TemporaryAccount(.user, label: "turn")
        let (directory, spool, copy, config) = try Self.setUp()
        withExtendedLifetime(directory) {}
        let acked = try stranger.run("\(copy) --config \(config) ack needsAttention/a-1@alpha.json", umask: "0022")
        #expect(acked.status == 0, "\(acked.output)")
        #expect(FileManager.default.fileExists(atPath: spool + "/failed/a-1@alpha.json"))
        #expect(!FileManager.default.fileExists(atPath: spool + "/.courier/serial.turnstile"))
    }

    @Test(
        "a person who may only read the turnstile waits in it read-only and acks",
        .asRoot("runs courier as another user"), .needs("runuser", "useradd"))
    func aReadOnlyTurnstileIsUsed() throws {
        let stranger = try TemporaryAccount(.user, label: "turn")
        let (directory, spool, copy, config) = try Self.setUp()
        let turnstile = spool + "/.courier/serial.turnstile"
        #expect(FileManager.default.createFile(atPath: turnstile, contents: nil))
        chmod(turnstile, 0o644)
        // While root holds the turnstile, the stranger's ack waits in it.
        let ready = directory.path + "/held"
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = ["-x", turnstile, "sh", "-c", "touch \(ready) && sleep 2"]
        try holder.run()
        while !FileManager.default.fileExists(atPath: ready) { Thread.sleep(forTimeInterval: 0.01) }
        let started = Date()
        let acked = try stranger.run("\(copy) --config \(config) ack needsAttention/a-1@alpha.json", umask: "0022")
        let waited = Date().timeIntervalSince(started)
        holder.waitUntilExit()
        #expect(acked.status == 0, "\(acked.output)")
        #expect(FileManager.default.fileExists(atPath: spool + "/failed/a-1@alpha.json"))
        #expect(waited >= 1, "the ack waited \(waited) s for a turnstile held 2 s")
    }

    @Test(
        "a turnstile that cannot be created on a file system out of inodes is done without, and an ack still moves its entry",
        .asRoot("mounts a tmpfs"), .needs("mount", "umount"))
    func aTurnstileOnAFullFileSystemIsDoneWithout() throws {
        let directory = TemporaryDirectory("turnfull")
        let disk = directory.path + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: false)
        let mounted = try Shell.run(["mount", "-t", "tmpfs", "-o", "size=4m,nr_inodes=64", "tmpfs", disk])
        try #require(mounted.status == 0, "\(mounted.output)")
        defer {
            _ = try? Shell.run(["umount", "-l", disk])
            withExtendedLifetime(directory) {}
        }
        let (_, binary, config) = try ExitCodeTests.setUp(spool: disk + "/spool", in: directory)
        #expect(try binary.run(["--config", config, "init"]).status == 0)
        let spool = disk + "/spool"
        for id in ["a-1", "a-2"] {
            try Data(#"{"id":"\#(id)","kind":"sleep"}"#.utf8).write(
                to: URL(fileURLWithPath: spool + "/needsAttention/\(id)@alpha.json"))
        }
        // The first ack makes today's ledger file; the turnstile then goes
        // (a spool from before it), and every inode left is taken.
        #expect(try binary.run(["--config", config, "ack", "needsAttention/a-1@alpha.json"]).status == 0)
        try FileManager.default.removeItem(atPath: spool + "/.courier/serial.turnstile")
        try FileManager.default.createDirectory(atPath: disk + "/fill", withIntermediateDirectories: false)
        var filled = 0
        while FileManager.default.createFile(atPath: disk + "/fill/\(filled)", contents: nil) { filled += 1 }
        #expect(!FileManager.default.createFile(atPath: disk + "/one-more", contents: nil), "filled \(filled)")
        // A move makes no new file: the full disk is no reason to refuse it.
        let acked = try binary.run(["--config", config, "ack", "needsAttention/a-2@alpha.json"])
        #expect(acked.status == 0, "\(acked.error)")
        #expect(FileManager.default.fileExists(atPath: spool + "/failed/a-2@alpha.json"))
        #expect(!FileManager.default.fileExists(atPath: spool + "/.courier/serial.turnstile"))
    }
}
