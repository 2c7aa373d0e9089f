import Glibc

/// The append-only record of every event, one file per UTC day.
public final class Ledger {
    private let directory: DirectoryHandle
    private var openDay: (day: String, file: FileDescriptor)?
    private let log: EventLog
    private let faults: FaultPlan?

    public init(directory: DirectoryHandle, log: EventLog = .silent, faults: FaultPlan? = nil) {
        self.directory = directory
        self.log = log
        self.faults = faults
    }

    /// Appends each line with one write(2) to an O_APPEND file, so
    /// concurrent writers never interleave, then fsyncs each day file once:
    /// when this returns, the lines are on disk.
    public func append(_ lines: [LedgerLine]) throws(SpoolError) {
        guard !lines.isEmpty else { return }
        var touched: [String: FileDescriptor] = [:]
        for line in lines {
            let day = line.time.utcDay
            let file = try dayFile(day)
            do {
                try faults?.check(.write)
                try file.write(Array(line.formatted.utf8))
            } catch {
                throw .operation("append to", path: "ledger/\(day).tsv", error)
            }
            touched[day] = file
        }
        for (day, file) in touched {
            do {
                try faults?.check(.sync)
                try file.sync()
            } catch {
                throw .operation("sync", path: "ledger/\(day).tsv", error)
            }
        }
        for line in lines { log.record(line) }
    }

    public func append(_ line: LedgerLine) throws(SpoolError) {
        try append([line])
    }

    private func dayFile(_ day: String) throws(SpoolError) -> FileDescriptor {
        if let open = openDay, open.day == day { return open.file }
        let name = FileName(day + ".tsv")
        let existed: Bool
        let file: FileDescriptor
        do {
            existed = try directory.contains(name)
            file = try directory.openFile(name, flags: O_WRONLY | O_APPEND | O_CREAT, mode: 0o640)
            // A new day file must survive a crash as a directory entry too.
            if !existed { try directory.sync() }
        } catch {
            throw .operation("open", path: "ledger/\(day).tsv", error)
        }
        openDay = (day, file)
        return file
    }

    /// The day files, oldest first: `YYYY-MM-DD.tsv`.
    public static func dayFiles(in directory: DirectoryHandle) throws(SpoolError) -> [(day: String, name: FileName)] {
        let names: [FileName]
        do { names = try directory.sortedNames() } catch { throw .operation("list", path: "ledger/", error) }
        return names.compactMap { name in
            guard let text = name.string, text.hasSuffix(".tsv") else { return nil }
            let day = String(text.dropLast(4))
            guard Timestamp(dateOrTime: day) != nil, day.count == 10 else { return nil }
            return (day, name)
        }
    }

    /// Every well-formed line from `since` (a UTC day, inclusive) on, in
    /// file order. Malformed lines are counted, not fatal: the ledger is a
    /// text file people may edit.
    public static func read(
        from directory: DirectoryHandle, sinceDay: String? = nil, untilDay: String? = nil,
        _ visit: (LedgerLine) -> Void
    ) throws(SpoolError) -> Int {
        var malformed = 0
        for (day, name) in try dayFiles(in: directory) {
            if let sinceDay, day < sinceDay { continue }
            if let untilDay, day > untilDay { continue }
            let bytes: [UInt8]
            do {
                let file = try directory.openFile(name, flags: O_RDONLY)
                bytes = try file.read(upTo: Int.max)
            } catch {
                throw .operation("read", path: "ledger/\(name)", error)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                if let parsed = LedgerLine(parsing: line) { visit(parsed) } else { malformed += 1 }
            }
        }
        return malformed
    }
}
