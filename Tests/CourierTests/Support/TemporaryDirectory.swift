import Foundation
import Glibc

/// A fresh directory under /tmp, removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "test") {
        var template = Array("/tmp/courier-\(label)-XXXXXX".utf8CString)
        // mkdtemp fails only when /tmp is unusable; then nothing can run.
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed: \(errno)") }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ text: String, to relative: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + relative))
    }
}
