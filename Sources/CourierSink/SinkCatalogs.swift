import CourierPosix
import CourierRecords
import CourierSupport
import Foundation
import Glibc

/// The name a delta page gives its cursor to the next page: the sync
/// architecture's `next_cursor` (the default), or `nextCursor`, which older
/// clients of courier's own documents read.
package enum PageCursorName: String, Sendable, CaseIterable {
    case snakeCase = "next_cursor"
    case camelCase = "nextCursor"
}

extension Sink {
    /// `GET /catalogs/NAME/delta?since=V&cursor=C&pageSize=N`, served from
    /// `--catalogs DIR`: every `DIR/NAME/ID.json` is an item whose version is
    /// its modification time in milliseconds; `DIR/NAME/tombstones.tsv` holds
    /// `ID<TAB>VERSION` lines for deleted items, served as tombstone objects
    /// `{"id","deleted_at","version"}`, with the cursor to the next page as
    /// `next_cursor` (or, with `--page-cursor nextCursor`, `nextCursor`).
    /// `since` is a version or an RFC 3339 time (a version is
    /// milliseconds, so both compare alike); every page
    /// also carries `server_time`, for clients that key deltas by time.
    /// Changes newer than `since` are ordered by (version, id); the cursor is
    /// an offset into that order, which stays stable while a client pages
    /// (newer changes sort after).
    func catalogDelta(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/")
        guard parts.count == 3, SinkBytes.isCatalogName(parts[1]), let catalogs else {
            return .json(404, #"{"error":"no such catalog"}"#)
        }
        let query = Self.query(request.target)
        let since = Self.since(query["since"] ?? "0")
        let offset = Int(query["cursor"] ?? "0") ?? -1
        let pageSize = Int(query["pageSize"] ?? "500") ?? 0
        guard since >= 0, offset >= 0, (1...10_000).contains(pageSize) else {
            return .json(
                400,
                #"{"error":"since must be a version or an RFC 3339 time; cursor and pageSize numbers (pageSize 1-10000)"}"#
            )
        }
        let directory = catalogs + "/" + parts[1]
        guard let handle = try? DirectoryHandle.open(path: directory) else {
            return .json(404, #"{"error":"no such catalog"}"#)
        }

        let serverTime = Self.serverTime()
        var latest: [String: (version: Int64, deleted: Bool)] = [:]
        for fileName in (try? handle.sortedNames()) ?? [] {
            guard let text = fileName.string, text.hasSuffix(".json"), let id = EntityID(String(text.dropLast(5))),
                let status = try? handle.status(of: fileName), status.kind == .regular
            else { continue }
            latest[id.text] = (status.modified.nanosecondsSinceEpoch / 1_000_000, false)
        }
        if let tombstones = try? String(contentsOfFile: directory + "/tombstones.tsv", encoding: .utf8) {
            for line in tombstones.split(separator: "\n") {
                let columns = line.split(separator: "\t")
                guard columns.count == 2, let version = Int64(columns[1]) else { continue }
                let id = String(columns[0])
                if let current = latest[id], current.version >= version { continue }
                latest[id] = (version, true)
            }
        }
        let changes = latest.filter { $0.value.version > since }
            .sorted { ($0.value.version, $0.key) < ($1.value.version, $1.key) }
        let version = max(since, latest.values.map(\.version).max() ?? 0)
        let page = changes.dropFirst(offset).prefix(pageSize)
        var upserts: [String] = []
        var tombstones: [String] = []
        for (id, change) in page {
            if change.deleted {
                // As the sync architecture's backend sends them: an object
                // with the id, when it was deleted, and its version.
                let deletedAt = Timestamp(nanosecondsSinceEpoch: change.version * 1_000_000).rfc3339
                tombstones.append(
                    #"{"id":\#(String(decoding: JSONValidator.encodeString(id), as: UTF8.self)),"#
                        + #""deleted_at":"\#(deletedAt)","version":\#(change.version)}"#)
            } else if let data = FileManager.default.contents(atPath: directory + "/\(id).json") {
                upserts.append(String(decoding: data, as: UTF8.self).trimmingSpaces)
            }
        }
        let next = offset + page.count < changes.count ? #""\#(offset + page.count)""# : "null"
        return .json(
            200,
            #"{"upserts":[\#(upserts.joined(separator: ","))],"tombstones":[\#(tombstones.joined(separator: ","))],"#
                + #""\#(pageCursor.rawValue)":\#(next),"version":\#(version),"server_time":"\#(serverTime.rfc3339)"}"#)
    }

    /// A time no change made after this page can be stamped before, so a
    /// delta since it misses none: the kernel stamps mtimes from its coarse
    /// clock, up to a tick (4 ms at HZ=250) behind `Timestamp.now()`, and
    /// versions are whole milliseconds. So the coarse clock, less one
    /// millisecond; what changed within it comes again, which is harmless.
    static func serverTime() -> Timestamp {
        var coarse = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &coarse)
        return Timestamp(secondsSinceEpoch: Int64(coarse.tv_sec), nanoseconds: Int64(coarse.tv_nsec))
            - .milliseconds(1)
    }

    /// A version, or an RFC 3339 time as the same milliseconds; -1 for neither.
    static func since(_ text: String) -> Int64 {
        if let version = Int64(text) { return version }
        guard let time = Timestamp(rfc3339: text) else { return -1 }
        return time.nanosecondsSinceEpoch / 1_000_000
    }

    /// `POST /sync/ack` with `{"device_id","catalog"}` and the `version`,
    /// the `server_time` or both: appended to `DIR/acks.tsv` as `time device
    /// catalog version server_time`, `-` for what was not given.
    func acknowledge(_ request: HTTPRequest) -> HTTPResponse {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any],
            let device = object["device_id"] as? String, let catalog = object["catalog"] as? String
        else { return .json(400, #"{"error":"expected {\"device_id\",\"catalog\",\"version\",\"server_time\"}"}"#) }
        let version = object["version"] as? NSNumber
        let serverTime = object["server_time"] as? String
        guard version != nil || serverTime.flatMap(Timestamp.init(rfc3339:)) != nil else {
            return .json(400, #"{"error":"an acknowledgement needs a numeric version or an RFC 3339 server_time"}"#)
        }
        let line =
            [Timestamp.now().rfc3339, device, catalog, version?.stringValue ?? "-", serverTime ?? "-"]
            .map(SinkBytes.escaped).joined(separator: "\t") + "\n"
        let fd = open(directory + "/acks.tsv", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { return .json(503, #"{"error":"unable to record the acknowledgement"}"#) }
        let written = line.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
        return written > 0
            ? HTTPResponse(status: 204) : .json(503, #"{"error":"unable to record the acknowledgement"}"#)
    }

    static func query(_ target: String) -> [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        var values: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            values[String(parts[0])] = String(parts[1]).removingPercentEncoding ?? String(parts[1])
        }
        return values
    }
}
