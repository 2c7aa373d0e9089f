import Glibc

/// An errno value, thrown with typed throws from the syscall layer.
package struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    package let code: Int32

    package init(_ code: Int32) { self.code = code }

    /// The process (or the system) is out of open files or memory: not
    /// the fault of the file or server it was for (intake's checked read,
    /// a delivery's socket).
    package var isOwnLimit: Bool { [EMFILE, ENFILE, ENOMEM].contains(code) }

    /// The calling thread's errno, read right after a failed call.
    package static var current: Errno { Errno(errno) }

    package var description: String { String(cString: strerror(code)) }

    package static let noSuchFile = Errno(ENOENT)
    package static let fileExists = Errno(EEXIST)
    package static let wouldBlock = Errno(EWOULDBLOCK)
    package static let crossDevice = Errno(EXDEV)
    package static let interrupted = Errno(EINTR)
    package static let noSpace = Errno(ENOSPC)
}

/// Runs a syscall that returns -1 on failure, retrying EINTR here and
/// nowhere else.
@discardableResult
package func system(_ call: () -> Int32) throws(Errno) -> Int32 {
    while true {
        let result = call()
        if result != -1 { return result }
        let error = Errno.current
        if error != .interrupted { throw error }
    }
}

/// The same for calls that return a byte count.
package func systemCount(_ call: () -> Int) throws(Errno) -> Int {
    while true {
        let result = call()
        if result != -1 { return result }
        let error = Errno.current
        if error != .interrupted { throw error }
    }
}
