import Foundation

/// A record file named on the command line, read whole; a failure names
/// the file and the reason (`No such file or directory`).
enum InputFile {
    struct Problem: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "unable to read \(path): \(reason)" }
    }

    static func read(_ path: String) -> Result<[UInt8], Problem> {
        do {
            return .success(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        } catch {
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            if let underlying, underlying.domain == NSPOSIXErrorDomain {
                return .failure(Problem(path: path, reason: String(cString: strerror(Int32(underlying.code)))))
            }
            switch (error as? CocoaError)?.code {
            case .fileReadNoSuchFile?: return .failure(Problem(path: path, reason: String(cString: strerror(ENOENT))))
            case .fileReadNoPermission?:
                return .failure(Problem(path: path, reason: String(cString: strerror(EACCES))))
            default: return .failure(Problem(path: path, reason: error.localizedDescription))
            }
        }
    }
}
