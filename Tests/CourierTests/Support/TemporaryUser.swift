import Foundation
import Glibc

/// A system user (with a group of its own name) or a bare group that lives
/// as long as this value: for the tests that play the courier user and the
/// producers beside it. Root only; removed again in `deinit`.
final class TemporaryAccount {
    enum Kind {
        case user
        case group
    }

    let name: String
    let kind: Kind

    /// `label` keeps the name readable in a leftover `getent` line; the
    /// process id and a random number keep two test runs apart.
    init(_ kind: Kind, label: String) throws {
        name = Self.freshName(label)
        self.kind = kind
        let made =
            switch kind {
            case .user:
                try Shell.run([
                    "useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name,
                ])
            case .group: try Shell.run(["groupadd", "--system", name])
            }
        guard made.status == 0 else { throw TestFailure("cannot add \(kind) \(name): \(made.output)") }
    }

    /// An account someone else (the README's own commands) adds under
    /// `name`: only removed here.
    init(adopting name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    static func freshName(_ label: String) -> String { "ct\(label)\(getpid() % 100_000)\(Int.random(in: 100...999))" }

    deinit {
        switch kind {
        case .user:
            _ = try? Shell.run(["userdel", name])
            // useradd --user-group made a group of the same name; userdel
            // removes it unless another user joined it.
            _ = try? Shell.run(["groupdel", name])
        case .group: _ = try? Shell.run(["groupdel", name])
        }
    }

    /// Adds `user` to this group (a supplementary group).
    func add(_ user: TemporaryAccount) throws {
        let added = try Shell.run(["usermod", "--append", "--groups", name, user.name])
        guard added.status == 0 else { throw TestFailure("cannot add \(user.name) to \(name): \(added.output)") }
    }

    /// Runs a shell command as this user, with `umask` (as a unit's UMask=
    /// or a producer's login shell would set it).
    func run(_ command: String, umask: String, environment: [String: String] = [:], in directory: String = "/")
        throws -> Shell.Result
    {
        try Shell.run(
            ["runuser", "-u", name, "--", "sh", "-c", "umask \(umask) && \(command)"], environment: environment,
            in: directory)
    }
}
