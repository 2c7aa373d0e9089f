import CourierIdentifiers
import CourierPosix
import CourierSupport
import Glibc

/// A subscriber a person has held (Postfix's `defer_transports`, a webhook
/// service's "pause endpoint"): the file `.courier/held/NAME`, made by
/// `courier hold` or by `touch`. Its modification time is since when, its
/// first line why. Rounds send nothing to a held subscriber; its entries
/// wait in `queued/` until the file is gone (`courier release`, `rm`).
package struct Hold: Sendable, Equatable {
    package let subscriber: SubscriberName
    package let since: Timestamp
    /// Empty when none was given (a `touch`).
    package let reason: String

    package init(subscriber: SubscriberName, since: Timestamp, reason: String) {
        self.subscriber = subscriber
        self.since = since
        self.reason = reason
    }
}

extension Spool {
    static let heldName = FileName("held")

    /// `.courier/held/`; nil when it does not exist yet (a spool made
    /// before holds, until the first `courier hold`, whose commit makes it).
    package func heldFolder() throws(SpoolError) -> DirectoryHandle? {
        do {
            return try control.openDirectory(Self.heldName)
        } catch let error where error.errno == .noSuchFile {
            return nil
        } catch {
            throw SpoolError(error)
        }
    }

    /// Every hold, by subscriber name. Names that cannot be a subscriber's
    /// (an editor's `alpha~`) hold nothing and are passed over.
    package func holds() throws(SpoolError) -> [Hold] {
        guard let folder = try heldFolder() else { return [] }
        var holds: [Hold] = []
        do {
            for name in try folder.sortedNames() {
                guard let text = name.string, let subscriber = SubscriberName(text),
                    let status = try folder.status(of: name)
                else { continue }
                holds.append(
                    Hold(subscriber: subscriber, since: status.modified, reason: Self.reason(name, in: folder)))
            }
        } catch {
            throw SpoolError(error)
        }
        return holds
    }

    /// The first line of a hold file, at most 200 bytes; empty when it
    /// cannot be read (a hold is a hold whatever its content).
    private static func reason(_ name: FileName, in folder: DirectoryHandle) -> String {
        guard let file = try? folder.openFile(name, flags: O_RDONLY), let bytes = try? file.read(upTo: 4096) else {
            return ""
        }
        let line = bytes.prefix { $0 != 0x0A }
        return String(decoding: line, as: UTF8.self).utf8Prefix(200).trimmingSpaces
    }
}
