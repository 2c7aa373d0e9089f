import CourierPosix
import Foundation

/// When the next background round will run, as systemd knows it.
package enum Schedule {
    /// systemd's own words for courier.timer's next elapse, or nil when
    /// there is no systemd or the timer is not active.
    package static func nextBackgroundRound() -> String? {
        let systemctl = "/usr/bin/systemctl"
        guard FileManager.default.fileExists(atPath: "/run/systemd/system"),
            FileManager.default.isExecutableFile(atPath: systemctl)
        else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: systemctl)
        process.arguments = ["show", "courier.timer", "--property=NextElapseUSecRealtime", "--value"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingSpaces
        guard process.terminationStatus == 0, !text.isEmpty, text != "n/a" else { return nil }
        return text
    }
}
