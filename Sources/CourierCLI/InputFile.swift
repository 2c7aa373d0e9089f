import CourierPosix
import Glibc

/// A record file named on the command line, or standard input, read up to
/// a limit; a failure names the file and the reason (`No such file or
/// directory`).
enum InputFile {
    struct Problem: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "unable to read \(path): \(reason)" }
    }

    /// At most `limit` bytes: a record over max-record-size is refused
    /// whatever its size, so `/dev/zero`, a 10 GB log named by mistake or
    /// `yes |` is not read to its end (or to the memory's).
    static func read(_ path: String, upTo limit: Int) -> Result<[UInt8], Problem> {
        do {
            return .success(try PathOperations.openFile(path, flags: O_RDONLY).read(upTo: limit))
        } catch {
            return .failure(Problem(path: path, reason: error.errno.description))
        }
    }

    /// Standard input, up to `limit` bytes, through a descriptor of its own
    /// (closing it leaves fd 0 open).
    static func readStandardInput(upTo limit: Int) -> Result<[UInt8], Problem> {
        let fd = dup(STDIN_FILENO)
        guard fd >= 0 else { return .failure(Problem(path: "standard input", reason: Errno.current.description)) }
        do {
            return .success(try FileDescriptor(owning: fd, path: "standard input").read(upTo: limit))
        } catch {
            return .failure(Problem(path: "standard input", reason: error.errno.description))
        }
    }
}
