import Glibc

/// A failed system call with its context: what courier was doing, to which
/// file (as a person would name it: `queued/X` inside the spool, the whole
/// path outside it), and the errno. `DirectoryHandle` and `FileDescriptor`
/// throw it, so callers never build a path for a message by hand.
package struct SystemError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The verb, as in "unable to *rename* …".
    package let operation: String
    package let path: String
    /// The second name of a two-name call (rename).
    package let destination: String?
    package let errno: Errno

    package init(_ operation: String, path: String, to destination: String? = nil, _ errno: Errno) {
        self.operation = operation
        self.path = path
        self.destination = destination
        self.errno = errno
    }

    /// `unable to rename queued/x to sent/x: No such file or directory`.
    package var description: String {
        if let destination { return "unable to \(operation) \(path) to \(destination): \(errno)" }
        return "unable to \(operation) \(path): \(errno)"
    }
}

/// Runs `call` and, when it fails, throws its errno with the context:
/// the one way the layer above `system` turns a failure into an error.
@discardableResult
package func system(_ operation: String, _ path: @autoclosure () -> String, _ call: () -> Int32)
    throws(SystemError) -> Int32
{
    do { return try system(call) } catch { throw SystemError(operation, path: path(), error) }
}

/// Calls on a path given as a string (outside any directory handle): the
/// C string lives until errno has been read, so nothing runs between the
/// failed call and the read (the string's release could touch errno).
@discardableResult
package func system(_ operation: String, onPath path: String, _ call: (UnsafePointer<CChar>) -> Int32)
    throws(SystemError) -> Int32
{
    let result: Result<Int32, Errno> = path.withCString { cPath in
        do throws(Errno) { return .success(try system { call(cPath) }) } catch { return .failure(error) }
    }
    switch result {
    case .success(let value): return value
    case .failure(let error): throw SystemError(operation, path: path, error)
    }
}

/// Operations on paths that no directory handle holds yet: the spool's
/// parents, the sink's directories, a log file named on the command line.
package enum PathOperations {
    /// mkdir(2); false when the directory already existed.
    @discardableResult
    package static func makeDirectory(_ path: String, mode: mode_t) throws(SystemError) -> Bool {
        do {
            try system("create directory", onPath: path) { mkdir($0, mode) }
            return true
        } catch let error where error.errno == .fileExists {
            return false
        }
    }

    /// open(2) of a path, close-on-exec.
    package static func openFile(_ path: String, flags: Int32, mode: mode_t = 0o640) throws(SystemError)
        -> FileDescriptor
    {
        let fd = try system("open", onPath: path) { open($0, flags | O_CLOEXEC, mode) }
        return FileDescriptor(owning: fd, path: path)
    }

    /// mkdtemp(3): a new private directory from a template ending in
    /// `XXXXXX`; returns its path.
    package static func makeTemporaryDirectory(template: String) throws(SystemError) -> String {
        var bytes = Array(template.utf8CString)
        let made = bytes.withUnsafeMutableBufferPointer { buffer -> Errno? in
            guard let base = buffer.baseAddress, mkdtemp(base) != nil else { return Errno.current }
            return nil
        }
        if let made { throw SystemError("create directory", path: template, made) }
        return String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
