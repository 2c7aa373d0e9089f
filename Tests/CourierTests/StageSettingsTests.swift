import CourierConfig
import Foundation
import Testing

@testable import CourierRound

/// Each stage's settings say which keys they read, and docs/architecture.md's
/// table "What each stage reads" says the same; every key the loader
/// accepts has a reader there.
@Suite struct StageSettingsTests {
    /// One row of the table: its reader and the keys of each column.
    struct Row {
        let reader: String
        let settings: String?
        let keys: Set<ConfigKey>
        let readsSecrets: Bool
    }

    static func rows() throws -> [Row] {
        let text = try String(contentsOfFile: Shell.repository + "/docs/architecture.md", encoding: .utf8)
        guard let start = text.range(of: "### What each stage reads") else {
            throw TestFailure("docs/architecture.md has no section \"What each stage reads\"")
        }
        var rows: [Row] = []
        for line in text[start.upperBound...].split(separator: "\n") {
            if line.hasPrefix("#") { break }
            guard line.hasPrefix("| "), !line.hasPrefix("| reader"), !line.hasPrefix("| ---") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 6 else { throw TestFailure("a row without six cells: \(line)") }
            var keys: Set<ConfigKey> = []
            for name in Self.quoted(cells[2]) {
                guard let key = CourierKey(rawValue: name) else { throw TestFailure("no [courier] key \(name)") }
                keys.insert(.courier(key))
            }
            for name in Self.quoted(cells[3]) {
                guard let key = SubscriberKey(rawValue: name) else { throw TestFailure("no subscriber key \(name)") }
                keys.insert(.subscriber(key))
            }
            for name in Self.quoted(cells[4]) {
                guard let key = CatalogKey(rawValue: name) else { throw TestFailure("no catalog key \(name)") }
                keys.insert(.catalog(key))
            }
            let reader = Self.quoted(cells[0]).first ?? cells[0]
            rows.append(
                Row(reader: reader, settings: Self.quoted(cells[1]).first, keys: keys, readsSecrets: cells[5] == "yes"))
        }
        return rows
    }

    /// The `code` words of a cell.
    static func quoted(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    @Test("the table in docs/architecture.md lists each stage with exactly the keys its settings declare")
    func theTableMatchesTheSettings() throws {
        let rows = try Self.rows().filter { $0.settings != nil }
        let secrets = Set(Configuration.redactorKeys)
        #expect(rows.map(\.reader).sorted() == RoundSettings.stageKeys.map(\.stage).sorted())
        for (stage, keys) in RoundSettings.stageKeys {
            guard let row = rows.first(where: { $0.reader == stage }) else { continue }
            let declared = Set(keys)
            #expect(row.readsSecrets == declared.isSuperset(of: secrets), "\(stage): the secrets column")
            let listed = row.readsSecrets ? row.keys.union(secrets) : row.keys
            #expect(listed == declared, "\(stage): the table says \(row.keys.map(\.description).sorted())")
        }
    }

    @Test("every key the configuration loader accepts is read by a stage or a command")
    func everyKeyHasAReader() throws {
        var read: Set<ConfigKey> = []
        for row in try Self.rows() {
            read.formUnion(row.keys)
            if row.readsSecrets { read.formUnion(Configuration.redactorKeys) }
        }
        for (_, keys) in RoundSettings.stageKeys { read.formUnion(keys) }
        let unread = ConfigKey.all.filter { !read.contains($0) }
        #expect(unread.isEmpty, "no reader: \(unread.map(\.description))")
    }

    /// A value the loader may refuse, but only for what it is: never as an
    /// unknown key.
    @Test("the loader accepts each key of ConfigKey, in its own section, and refuses any other")
    func theLoaderKnowsEachKey() throws {
        func refusal(_ section: String, _ key: String) -> String? {
            let subscriber = "[subscriber s]\nurl = http://127.0.0.1:9/x\n"
            let text =
                section == "courier"
                ? "[courier]\n\(key) = 1\n\(subscriber)" : "[\(section) s]\n\(key) = 1\nurl = http://127.0.0.1:9/x\n"
            do { _ = try Configuration.parse(Array(text.utf8), file: "/etc/courier.conf") } catch {
                if case .invalid(_, _, _, _, let reason) = error { return reason }
            }
            return nil
        }
        for key in ConfigKey.all where key != .subscriber(.url) && key != .catalog(.url) {
            let section: String
            switch key {
            case .courier: section = "courier"
            case .subscriber: section = "subscriber"
            case .catalog: section = "catalog"
            }
            #expect(refusal(section, key.name) != "unknown key", "\(key)")
        }
        for section in ["courier", "subscriber", "catalog"] {
            #expect(refusal(section, "colour") == "unknown key")
        }
    }
}
