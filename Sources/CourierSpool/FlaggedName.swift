import CourierIdentifiers
import CourierPosix
import CourierSupport

extension Transition {
    /// Flagging: a file that will not be taken moves, unchanged, to
    /// `needsAttention/invalid-TIME-NAME` (`safe`), with its reason in the
    /// ledger first (Postfix's cleanup bouncing a malformed message, but
    /// kept). Intake flags what it cannot take, from `queued/`; a claim
    /// flags a file dropped under the name of an entry that already
    /// settled, from `sending/`, once its rename has made it this round's.
    /// `expected`: what the name must still be for the move (a dropped file
    /// flagged for what intake read in it).
    package static func flag(
        _ name: FileName, from place: SpoolPlace, as safe: FileName, reason: String, actor: LedgerActor,
        at now: Timestamp, expected: Expectation? = nil
    ) -> Transition {
        Transition(
            lines: [
                LedgerLine(
                    time: now, actor: actor, subscriber: nil, key: safe.description, event: .invalid,
                    detail: reason + FlaggedName.droppedAs(name))
            ],
            moves: [Move(name, from: place, to: .state(.needsAttention), as: safe, expected: expected)])
    }
}

/// The names flagged files get, and dropped names as the ledger shows them.
package enum FlaggedName {
    /// `invalid-20261130T070000Z-NAME`: NAME with every byte outside
    /// `[A-Za-z0-9._-]` made `_`, so it is one safe path component that
    /// can never parse as an entry. A name that was flagged before keeps
    /// its original part instead of growing.
    package static func make(for name: FileName, at time: Timestamp, in directory: DirectoryHandle) throws(SpoolError)
        -> FileName
    {
        let original = droppedPart(of: name).map { FileName(bytes: Array($0)) } ?? name
        let base = "\(prefix)\(time.compact)-" + safeComponent(original)
        var candidate = FileName(base)
        var counter = 2
        do {
            while try directory.contains(candidate) {
                candidate = FileName("\(base)-\(counter)")
                counter += 1
            }
        } catch {
            throw SpoolError(error)
        }
        return candidate
    }

    /// `invalid-`: what every flagged name begins with, before its time.
    private static let prefix = "invalid-"

    /// What follows `invalid-TIME-` in a flagged name; nil for any other name.
    package static func droppedPart(of name: FileName) -> ArraySlice<UInt8>? {
        // `invalid-`, then `20261130T070000Z-`.
        let start = prefix.utf8.count + 17
        guard name.bytes.starts(with: prefix.utf8), name.bytes.count > start,
            name.bytes[start - 2] == UInt8(ascii: "Z"), name.bytes[start - 1] == UInt8(ascii: "-")
        else { return nil }
        return name.bytes[start...]
    }

    /// The UTC day (`2026-11-30`) of the ledger file that holds a flagged
    /// name's flagging line: the day of the time in its name, since
    /// `make` and `Transition.flag` are given the same time. Nil for any
    /// other name.
    package static func ledgerDay(of name: FileName) -> String? {
        guard droppedPart(of: name) != nil else { return nil }
        // The time's date, `20261130`, right after the prefix.
        let digits = name.bytes[prefix.utf8.count..<prefix.utf8.count + 8]
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        let text = String(decoding: digits, as: UTF8.self)
        return "\(text.prefix(4))-\(text.dropFirst(4).prefix(2))-\(text.suffix(2))"
    }

    /// Whether a flagged name's dropped part (`droppedPart`) is `safe`
    /// (false) or `safe` with the counter `make` adds, `-2` and up (true);
    /// nil for any other part.
    package static func counted(_ part: ArraySlice<UInt8>, safe: [UInt8]) -> Bool? {
        guard part.starts(with: safe) else { return nil }
        let rest = part.dropFirst(safe.count)
        if rest.isEmpty { return false }
        let digits = rest.dropFirst()
        // As `make` writes it: no sign, no leading zero.
        guard rest.first == UInt8(ascii: "-"), let counter = Int(String(decoding: digits, as: UTF8.self)),
            counter >= 2, String(counter).utf8.elementsEqual(digits)
        else { return nil }
        return true
    }

    /// The dropped name made safe: bytes outside `[A-Za-z0-9._-]` become `_`.
    package static func safeComponent(_ name: FileName) -> String {
        let cleaned = name.bytes.prefix(120).map { byte -> UInt8 in
            NameBytes.isSafeFileName(byte) ? byte : UInt8(ascii: "_")
        }
        return String(decoding: cleaned, as: UTF8.self)
    }

    /// How a flagging line's detail ends: ` (dropped as NAME)`.
    package static func droppedAs(_ name: FileName) -> String { " (dropped as \(printable(name)))" }

    /// What a flagging line's detail says of its file being dropped as a name.
    package enum Verdict: Equatable, Sendable {
        /// The line names it, whole.
        case yes
        /// The line's 200 bytes end inside a name that begins as it does.
        case partly
        case no
    }

    /// What `detail`, a flagging line's, says of its file being dropped as
    /// `name`; nil when it cannot say: it shows no name, is redacted (a
    /// secret in the name), names a flagged file (one flagged again after
    /// a resend), shows the 100 characters a line keeps of a longer name,
    /// or ends in a way a whole line and a cut one both could.
    package static func flagging(_ detail: String, saysDroppedAs name: FileName) -> Verdict? {
        let marker = Array(" (dropped as ".utf8)
        let shown = Array(droppedAs(name).utf8.dropFirst(marker.count))
        let kept = Array(detail.utf8)
        // What follows each ` (dropped as `: the name may hold one too.
        let tails = kept.indices.filter { kept[$0...].starts(with: marker) }.map { kept[($0 + marker.count)...] }
            .filter { !$0.isEmpty }
        if tails.contains(where: { $0.elementsEqual(shown) }) { return name.bytes.count > 100 ? nil : .yes }
        guard !tails.isEmpty, !detail.contains(Redactor.mark) else { return nil }
        let isFlagged = { (tail: ArraySlice<UInt8>) in
            droppedPart(of: FileName(bytes: Array(tail.last == UInt8(ascii: ")") ? tail.dropLast() : tail))) != nil
        }
        guard !tails.contains(where: isFlagged) else { return nil }
        // Cut to a whole character at most 200 bytes long: 197 and up.
        guard kept.count > LedgerLine.detailLimit - 4 else { return .no }
        var ambiguous = false
        for tail in tails where shown.starts(with: tail) {
            // One that ends in `)` may be a whole line's, naming another.
            if tail.last != UInt8(ascii: ")") { return .partly }
            ambiguous = true
        }
        return ambiguous ? nil : .no
    }

    /// A dropped file's name for the ledger: printable, never a tab.
    package static func printable(_ name: FileName) -> String {
        let text = String(decoding: name.bytes, as: UTF8.self)
        // 100 bytes or fewer are 100 characters or fewer: no second string.
        return name.bytes.count <= 100 ? text : String(text.prefix(100))
    }
}
