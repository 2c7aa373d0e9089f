import Foundation
import Testing

/// The durable protocol is written once (`SpoolSession.commit`), and the
/// sources show it: one rename call, and no target above the spool moving,
/// removing or syncing files itself (issue 19). The compiler keeps the
/// spool's own moves, ledger appends and syncs internal to CourierSpool;
/// these catch a raw call on a directory handle.
@Suite struct ProtocolBoundaryTests {
    static let sources = Shell.repository + "/Sources"

    /// Every Swift source under Sources/, by its path from there.
    static func swiftSources() throws -> [(path: String, text: String)] {
        let enumerator = FileManager.default.enumerator(atPath: sources)
        var found: [(String, String)] = []
        while let path = enumerator?.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            found.append((path, try String(contentsOfFile: sources + "/" + path, encoding: .utf8)))
        }
        return found
    }

    /// Lines that call `pattern`, comments aside.
    static func calls<Output>(_ pattern: Regex<Output>, in text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return code.contains(pattern)
        }
    }

    @Test("Sources has exactly one rename call, DirectoryHandle.rename, and nothing else renames or links")
    func oneRenameCallSite() throws {
        var renames: [String] = []
        for (path, text) in try Self.swiftSources() {
            for line in Self.calls(try Regex(#"courier_rename\(|\brenameat2?\(|Glibc\.rename\(|moveItem\("#), in: text)
            {
                renames.append("\(path): \(line.trimmingCharacters(in: .whitespaces))")
            }
            let links = Self.calls(try Regex(#"\blinkat\(|Glibc\.link\("#), in: text)
            #expect(links.isEmpty || path == "CourierPosix/DirectoryHandle.swift", "\(path): \(links)")
        }
        #expect(renames.count == 1, "\(renames)")
        #expect(renames.first?.hasPrefix("CourierPosix/DirectoryHandle.swift") == true, "\(renames)")
    }

    @Test("above the spool nothing renames, removes, stamps or syncs files but through a commit")
    func noRawFileChangesAboveTheSpool() throws {
        // Files outside any spool, and one that is no spool item: the
        // metrics textfile, the notifier's input; and the reference
        // receiver (CourierSink), a server of its own with its own store.
        let allowed: [String: String] = [
            "CourierOperations/MetricsFile.swift": "the textfile collector's file, outside the spool",
            "CourierRound/Notifier.swift": "the notifier's standard input, never a spool item",
        ]
        let raw = try Regex(
            #"\.(rename|removeDirectory|syncFileSystem|setModified|touch|publish|stage|writeAtomically)\(|\.sync\(\)|\bunlinkat?\(|createFile\(atPath|moveItem\(|removeItem\("#
        )
        // `remove(` is a collection's as often: these receivers are ones.
        let removal = try Regex(#"(\w+)\.remove\((?!at:)"#)
        let collections: Set<String> = ["refused", "connections", "multi", "madeByPass"]
        for (path, text) in try Self.swiftSources()
        where !path.hasPrefix("CourierPosix/") && !path.hasPrefix("CourierSpool/") && !path.hasPrefix("CourierSink/")
            && allowed[path] == nil
        {
            var found = Self.calls(raw, in: text)
            for line in Self.calls(removal, in: text) {
                let receivers = line.matches(of: removal).compactMap { match -> String? in
                    line[match.range].split(separator: ".").first.map(String.init)
                }
                if receivers.contains(where: { !collections.contains($0) }) {
                    found.append(line)
                }
            }
            #expect(found.isEmpty, "\(path) changes files itself; build a Transition instead: \(found)")
        }
    }
}
