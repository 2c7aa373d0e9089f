import CourierIdentifiers
import CourierPosix
import CourierRound
import CourierSpool
import Foundation

package enum OperationError: Error, Sendable, CustomStringConvertible {
    case noSuchEntry(String)
    case wrongState(String, SpoolState, expected: [SpoolState])
    case notAnEntry(String)
    case ambiguous(String, [String])
    case unknownSubscriber(String)
    case spool(SpoolError)

    package var description: String {
        switch self {
        case .notAnEntry(let text):
            return "\(text) is a file intake did not accept, not an entry; fix it and `courier resend` it"
        case .ambiguous(let text, let names):
            return "\(text) means \(names.joined(separator: ", ")); name one as KEY@SUB"
        case .unknownSubscriber(let name):
            return "no [subscriber \(name)] in the configuration"
        case .noSuchEntry(let text):
            return "no item \(text) in any state folder (give KEY@SUB.json, KEY@SUB or KEY)"
        case .wrongState(let text, let state, let expected):
            return
                "\(text) is in \(state.rawValue)/, not in \(expected.map { $0.rawValue + "/" }.joined(separator: " or "))"
        case .spool(let error):
            return error.description
        }
    }
}

extension Spool {
    /// Every state folder that holds `name`: one, unless something went
    /// wrong, and then a person must hear of every place.
    private func everyPlace(of name: FileName) throws(OperationError) -> [SpoolItem] {
        var found: [SpoolItem] = []
        for state in SpoolState.allCases {
            let here: Bool
            do { here = try directory(state).contains(name) } catch { throw .spool(SpoolError(error)) }
            if here { found.append(SpoolItem(name: name, state: state, entry: EntryName(fileName: name))) }
        }
        if !found.contains(where: { $0.state == .sending }) {
            let elsewhere: DirectoryHandle?
            do { elsewhere = try claimFolderElsewhere(holding: name) } catch { throw .spool(error) }
            if elsewhere != nil {
                found.append(SpoolItem(name: name, state: .sending, entry: EntryName(fileName: name)))
            }
        }
        return found
    }

    /// Resolves what a person typed: `KEY@SUB.json` (also as
    /// `state/KEY@SUB.json`), `KEY@SUB`, a safe name from needsAttention/,
    /// or a KEY, which means every subscriber's entry of that key.
    package func resolve(_ text: String) throws(OperationError) -> [SpoolItem] {
        let last = String(text.split(separator: "/").last ?? Substring(text))
        // A hidden name is invisible in every folder (never moved), and `.`,
        // `..` or `/` would find a folder itself.
        guard !last.isEmpty, !last.hasPrefix("."), !last.contains("/") else { throw .noSuchEntry(text) }
        let exact = FileName(last)
        let named = try everyPlace(of: exact)
        if !named.isEmpty { return named }
        if let entry = EntryName(last, requireExtension: false) {
            let found = try everyPlace(of: entry.fileName)
            if !found.isEmpty { return found }
        }
        let flagged = try flaggedIntakeFiles(named: exact)
        if !flagged.isEmpty { return flagged }
        guard let key = DeliveryKey(last) else { throw .noSuchEntry(text) }
        var found: [SpoolItem] = []
        for state in SpoolState.allCases {
            do {
                let stream = try directory(state).entries()
                while let name = try stream.next() {
                    if let entry = EntryName(fileName: name), entry.key == key {
                        found.append(SpoolItem(name: name, state: state, entry: entry))
                    }
                }
            } catch {
                throw .spool(SpoolError(error))
            }
        }
        guard !found.isEmpty else { throw .noSuchEntry(text) }
        return found.sorted { $0.name < $1.name }
    }

    /// A dropped file that intake flagged, found by the name it was dropped
    /// as: `partial.json` finds `needsAttention/invalid-…-partial.json`
    /// (the safe part exact), and `invalid-…-partial.json-2`, flagged in
    /// the same second. Names that differ only in bytes made `_` share one
    /// safe part (`a b` and `a\tb` both `a_b`), and a counter may be another
    /// name's own (`x.json-2`): the ledger's flagging line of each file,
    /// which says what it was dropped as, decides. Where a line cannot say
    /// (none, or see `FlaggedName.flagging`), the exact safe part alone
    /// decides, as it did before lines were read for this: a file is left
    /// out only by a line naming another name, and added only by one
    /// naming this one.
    private func flaggedIntakeFiles(named name: FileName) throws(OperationError) -> [SpoolItem] {
        let safe = Array(FlaggedName.safeComponent(name).utf8)
        var found: [(item: SpoolItem, counted: Bool)] = []
        for state in [SpoolState.needsAttention, .failed, .queued] {
            do {
                let stream = try directory(state).entries()
                while let candidate = try stream.next() {
                    // The whole part after the time: a suffix would let
                    // `y.json` find the file dropped as `xZ-y.json` too.
                    guard let part = FlaggedName.droppedPart(of: candidate),
                        let counted = FlaggedName.counted(part, safe: safe)
                    else { continue }
                    found.append((SpoolItem(name: candidate, state: state, entry: nil), counted))
                }
            } catch {
                throw .spool(SpoolError(error))
            }
        }
        guard !found.isEmpty else { return [] }
        let details = flaggingDetails(of: found.map(\.item.name))
        let verdicts = found.map { candidate in
            details[candidate.item.name.description].flatMap { FlaggedName.flagging($0, saysDroppedAs: name) }
        }
        // Two lines that agree in the part they kept tell nothing apart.
        let partly = verdicts.filter { $0 == .partly }.count
        return zip(found, verdicts).filter { candidate, verdict in
            switch verdict {
            case .yes: true
            case .no: false
            case .partly where partly == 1: true
            case .partly, nil: !candidate.counted
            }
        }.map(\.0.item).sorted { $0.name < $1.name }
    }

    /// The details of the ledger lines that flagged `names`, by name. Only
    /// the days their names say are read (`FlaggedName.ledgerDay`), not
    /// the six months a ledger keeps. A ledger or a day that cannot be
    /// read leaves the lines not yet read unable to say; a line read before
    /// the error still says what it says, as one on another day does.
    private func flaggingDetails(of names: [FileName]) -> [String: String] {
        var byDay: [String: Set<String>] = [:]
        for name in names {
            if let day = FlaggedName.ledgerDay(of: name) { byDay[day, default: []].insert(name.description) }
        }
        var details: [String: String] = [:]
        guard !byDay.isEmpty, let days = try? Ledger.days(in: ledgerDirectory) else { return details }
        for day in days {
            guard let keys = byDay[day.day] else { continue }
            _ = try? Ledger.readDay(day.files, in: ledgerDirectory, containing: "\t\(LedgerEvent.invalid.rawValue)\t") {
                line in
                if line.event == .invalid, keys.contains(line.key) { details[line.key] = line.detail }
            }
        }
        return details
    }

}
