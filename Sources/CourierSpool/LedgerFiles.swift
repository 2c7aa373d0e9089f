import CourierIdentifiers
import CourierPosix
import CourierSupport

/// The name of a ledger file: `YYYY-MM-DD.tsv` when one worker writes the
/// spool, `YYYY-MM-DD.WORKER.tsv` for each of several. Every reader takes
/// all of a day's files as that day's ledger.
package struct LedgerFileName: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The UTC day, `YYYY-MM-DD`.
    package let day: String
    package let worker: WorkerID?

    package init(day: String, worker: WorkerID? = nil) {
        self.day = day
        self.worker = worker
    }

    /// Parses a name in `ledger/`; nil for anything else there.
    package init?(_ name: FileName) {
        guard let text = name.string, text.hasSuffix(".tsv"), text.utf8.count >= 14 else { return nil }
        let day = String(text.prefix(10))
        guard Timestamp(dateOrTime: day) != nil, day.utf8.count == 10 else { return nil }
        let middle = text.dropFirst(10).dropLast(4)
        if middle.isEmpty {
            self.init(day: day)
        } else {
            guard middle.first == ".", let worker = try? WorkerID(String(middle.dropFirst())) else { return nil }
            self.init(day: day, worker: worker)
        }
    }

    package var description: String { day + (worker.map { "." + $0.value } ?? "") + ".tsv" }

    package var fileName: FileName { FileName(description) }

    /// By day; within a day the day's own file first, then the workers'
    /// by name: the order a merge takes lines of equal time in.
    package static func < (lhs: LedgerFileName, rhs: LedgerFileName) -> Bool {
        guard lhs.day == rhs.day else { return lhs.day < rhs.day }
        switch (lhs.worker, rhs.worker) {
        case (nil, nil), (.some, nil): return false
        case (nil, .some): return true
        case (.some(let left), .some(let right)): return left < right
        }
    }
}

/// One UTC day of the ledger: its files, in `LedgerFileName` order.
package struct LedgerDay: Sendable, Equatable {
    package let day: String
    package var files: [FileName]
}

extension Ledger {
    /// Every ledger file with its day, oldest day first, a day's files in
    /// `LedgerFileName` order.
    package static func dayFiles(in directory: DirectoryHandle) throws(SpoolError) -> [(day: String, name: FileName)] {
        let names: [FileName]
        do { names = try directory.sortedNames() } catch { throw SpoolError(error) }
        return names.compactMap(LedgerFileName.init).sorted().map { ($0.day, $0.fileName) }
    }

    /// The ledger by day, oldest first.
    package static func days(in directory: DirectoryHandle) throws(SpoolError) -> [LedgerDay] {
        var days: [LedgerDay] = []
        for (day, name) in try dayFiles(in: directory) {
            if days.last?.day == day {
                days[days.count - 1].files.append(name)
            } else {
                days.append(LedgerDay(day: day, files: [name]))
            }
        }
        return days
    }
}
