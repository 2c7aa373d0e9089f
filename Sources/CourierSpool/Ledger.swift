import CourierIdentifiers
import CourierPosix
import CourierSupport
import Glibc

/// The append-only record of every event, one file per UTC day, or per
/// day and worker when several share the spool (`LedgerFileName`).
package final class Ledger {
    private let directory: DirectoryHandle
    /// nil: the spool has one writer, whose files are `YYYY-MM-DD.tsv`.
    private let worker: WorkerID?
    private var openDay: (day: String, file: FileDescriptor)?
    /// The open day file may end in half a line (a write that failed and
    /// could not be taken back, or an earlier process's): the next write
    /// starts with a newline so that its lines stay whole.
    private var mayEndTorn = false
    private let log: EventLog
    var faults: FaultPlan?
    private(set) var redactor: Redactor
    private var times = LedgerTimeText()

    init(
        directory: DirectoryHandle, log: EventLog = .silent, faults: FaultPlan? = nil, redactor: Redactor = Redactor(),
        worker: WorkerID? = nil
    ) {
        self.directory = directory
        self.worker = worker
        self.log = log
        self.faults = faults
        self.redactor = redactor
    }

    /// Appends the lines, one write(2) per day file under an flock (so
    /// courier's writers never interleave or undo each other), then fsyncs
    /// each day file once: when this returns, the lines are on disk. A
    /// write that fails is taken back, so the file always ends in a whole
    /// line. Details are redacted before they are cut to their 200 bytes.
    func append(_ lines: [LedgerLine]) throws(SpoolError) {
        guard !lines.isEmpty else { return }
        // The lines of one commit nearly always fall on one day.
        var days: [(day: String, text: [UInt8])] = []
        // Kept for the log only if it shows any of the lines; with
        // `--quiet` it shows none.
        let logs = lines.contains { LogLevel(for: $0.event) <= log.threshold }
        var details: [String] = []
        if logs { details.reserveCapacity(lines.count) }
        for line in lines {
            let detail = line.detail.isEmpty ? line.detail : redactor.redact(line.detail)
            let day = times.day(of: line.time)
            let index: Int
            if let last = days.indices.last, days[last].day == day {
                index = last
            } else if let found = days.firstIndex(where: { $0.day == day }) {
                index = found
            } else {
                var text: [UInt8] = []
                // About what a line takes: one allocation for most commits.
                text.reserveCapacity(lines.count * 160)
                days.append((day, text))
                index = days.count - 1
            }
            line.append(to: &days[index].text, times: &times, detail: detail)
            if logs { details.append(detail) }
        }
        var touched: [FileDescriptor] = []
        for (day, text) in days {
            let file = try dayFile(day)
            try write(text, to: file)
            touched.append(file)
        }
        for file in touched {
            do {
                try faults?.check(.sync, path: file.path)
                try file.sync()
                faults?.powerCut?.syncedFile(file)
            } catch {
                throw SpoolError(error)
            }
        }
        guard logs else { return }
        for (line, detail) in zip(lines, details) where LogLevel(for: line.event) <= log.threshold {
            var shown = line
            shown.detail = detail
            log.record(shown)
        }
    }

    /// A secret learnt after the ledger was opened (an OAuth access token
    /// fetched during a round): redacted from every line written after.
    func addSecret(_ secret: String) {
        redactor.add(secret)
    }

    func addSecrets(of other: Redactor) {
        redactor.add(contentsOf: other)
    }

    func append(_ line: LedgerLine) throws(SpoolError) {
        try append([line])
    }

    /// A file that does not end in a newline was left by a writer that
    /// died inside its write (kill -9 cuts a write(2) short), or could not
    /// take a failed one back. Under the file's flock nobody is writing, so
    /// the part line is nobody's: it goes, back to the last newline, and
    /// the file holds whole lines only. (Lines are far shorter than the 8
    /// KiB looked at; failing that, the next write starts on a new line.)
    /// Returns where the next write begins.
    private static func dropTornTail(of file: FileDescriptor, size: Int) throws(SystemError) -> Int {
        let from = max(0, size - 8192)
        let tail = try file.read(from: from, upTo: size - from)
        if let newline = tail.lastIndex(of: 0x0A) {
            try file.truncate(to: from + newline + 1)
            return from + newline + 1
        }
        if from == 0 {
            try file.truncate(to: 0)
            return 0
        }
        try file.write([0x0A])
        return size + 1
    }

    private func write(_ bytes: [UInt8], to file: FileDescriptor) throws(SpoolError) {
        let result: Result<Void, SystemError> = file.whileLocked { () -> Result<Void, SystemError> in
            var start = 0
            do throws(SystemError) {
                start = try file.status().size
                if mayEndTorn, start > 0, try file.byte(at: start - 1) != 0x0A {
                    start = try Self.dropTornTail(of: file, size: start)
                }
                mayEndTorn = false
                if let tear = faults?.tear(.write) {
                    try file.write(bytes.prefix(bytes.count / 2))
                    throw SystemError("write", path: file.path, tear)
                }
                try faults?.check(.write, path: file.path)
                try file.write(bytes)
                faults?.powerCut?.appended(to: file, at: start)
                return .success(())
            } catch {
                // Take back whatever part of the lines got written; if even
                // that fails, the next write begins on a new line.
                if (try? file.truncate(to: start)) == nil { mayEndTorn = true }
                return .failure(error)
            }
        }
        if case .failure(let error) = result { throw .operation("append to", path: file.path, error.errno) }
    }

    private func dayFile(_ day: String) throws(SpoolError) -> FileDescriptor {
        let name = LedgerFileName(day: day, worker: worker).fileName
        // Still the file of that name: a person may have replaced it
        // (`sed -i`, an editor's write and rename) or removed it, and lines
        // appended to a file no name reaches are lost.
        if let open = openDay, open.day == day, let opened = try? open.file.status(),
            let named = try? directory.status(of: name), named.isSameFile(as: opened)
        {
            return open.file
        }
        let existed: Bool
        let file: FileDescriptor
        do {
            existed = try directory.contains(name)
            // Read as well as append: the last byte tells whether it ends torn.
            file = try directory.openFile(name, flags: O_RDWR | O_APPEND | O_CREAT, mode: 0o640)
            // A new day file must survive a crash as a directory entry too.
            if !existed {
                try faults?.check(.sync, path: directory.displayPath)
                try directory.sync()
                faults?.powerCut?.syncedFolder(directory)
            }
        } catch {
            throw SpoolError(error)
        }
        openDay = (day, file)
        // Another process may have left this file torn.
        mayEndTorn = existed
        return file
    }

    /// Every well-formed line from `since` (a UTC day, inclusive) on, in
    /// file order, a day's several files merged by time; with `needle`,
    /// only the lines that contain it (see `readDay`). Malformed lines are
    /// counted, not fatal: the ledger is a text file people may edit. A
    /// last line without its newline is one being written (or torn by a
    /// crash): it is read if it parses and otherwise passed over without
    /// being counted.
    package static func read(
        from directory: DirectoryHandle, sinceDay: String? = nil, untilDay: String? = nil,
        containing needle: String? = nil, _ visit: (LedgerLine) -> Void
    ) throws(SpoolError) -> Int {
        var malformed = 0
        for day in try days(in: directory) {
            if let sinceDay, day.day < sinceDay { continue }
            if let untilDay, day.day > untilDay { continue }
            malformed += try readDay(day.files, in: directory, containing: needle, visit)
        }
        return malformed
    }
}
