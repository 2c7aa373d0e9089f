import CourierPosix
import CourierSpool
import Foundation

/// A `kind`: a word subscribers filter on.
public enum RecordKind {
    public static let route = "route"

    public static func isValid(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { RecordID.isIDByte($0) && $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: ":") }
    }
}

/// Why a dropped file is not a record, in words for the ledger.
public enum RecordProblem: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge(size: Int, limit: Int)
    case notUTF8
    case notJSON(String)
    case notAnObject
    case missingField(String)
    case badField(String, String)

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit): return Spool.tooLarge(size, limit: limit)
        case .notUTF8: return "record is not UTF-8"
        case .notJSON(let reason): return "record is not JSON: \(reason)"
        case .notAnObject: return "record is not a JSON object"
        case .missingField(let field): return "record has no `\(field)`"
        case .badField(let field, let reason): return "`\(field)`: \(reason)"
        }
    }

    /// A file still being written looks like this; the settle rule gives
    /// it time before calling it invalid.
    public var mayBeIncomplete: Bool {
        switch self {
        case .notUTF8, .notJSON: return true
        default: return false
        }
    }
}

/// A validated record (docs/design.md §2). The bytes are kept exactly: they are
/// the body that is POSTed.
public struct Record: Sendable {
    public let id: RecordID
    public let kind: String
    public let time: Timestamp?
    public let subscribers: [SubscriberName]?
    public let awaitRoute: Bool
    /// `for`: the workout a route record belongs to.
    public let routeFor: RecordID?
    public let bytes: [UInt8]

    public static func parse(_ bytes: [UInt8], maximumSize: Int) -> Result<Record, RecordProblem> {
        guard bytes.count <= maximumSize else { return .failure(.tooLarge(size: bytes.count, limit: maximumSize)) }
        guard String(validating: bytes, as: UTF8.self) != nil else { return .failure(.notUTF8) }
        guard JSONValidator.isValid(bytes) else { return .failure(.notJSON(Self.whyNotJSON(bytes))) }
        guard let top = JSONSplice.object(at: Self.firstNonSpace(bytes), in: bytes) else {
            return .failure(.notAnObject)
        }
        // The last of a duplicated name wins, as in most parsers.
        func field(_ name: String) -> [UInt8]? {
            let wanted = Array(name.utf8)
            return top.members.last { $0.name == wanted }.map { Array(bytes[$0.value]) }
        }
        func string(_ value: [UInt8]) -> String? { JSONValidator.decodeString(value) }

        guard let rawID = field("id") else { return .failure(.missingField("id")) }
        guard let idText = string(rawID) else { return .failure(.badField("id", "must be a string")) }
        if let problem = RecordID.problem(with: idText) { return .failure(.badField("id", problem)) }
        guard let id = RecordID(idText) else { return .failure(.badField("id", "is not an id")) }

        guard let rawKind = field("kind") else { return .failure(.missingField("kind")) }
        guard let kind = string(rawKind), RecordKind.isValid(kind) else {
            return .failure(.badField("kind", "must be a word of 1–64 [A-Za-z0-9_-]"))
        }

        var time: Timestamp?
        if let rawTime = field("time") {
            guard let text = string(rawTime), let parsed = Timestamp(rfc3339: text) else {
                return .failure(.badField("time", "must be an RFC 3339 time such as 2026-11-30T07:00:00Z"))
            }
            time = parsed
        }

        var subscribers: [SubscriberName]?
        if let rawSubscribers = field("subscribers") {
            let names = JSONSplice.arrayElements(rawSubscribers)
            guard rawSubscribers.first == UInt8(ascii: "["), !names.isEmpty else {
                return .failure(.badField("subscribers", "must be a non-empty list of names"))
            }
            var parsed: [SubscriberName] = []
            for name in names {
                guard let text = string(name), let subscriber = SubscriberName(text) else {
                    return .failure(
                        .badField(
                            "subscribers",
                            "\(String(decoding: name.prefix(80), as: UTF8.self)) is not a subscriber name"))
                }
                if !parsed.contains(subscriber) { parsed.append(subscriber) }
            }
            subscribers = parsed
        }

        var awaitRoute = false
        if let rawAwait = field("awaitRoute") {
            switch rawAwait {
            case Array("true".utf8): awaitRoute = true
            case Array("false".utf8): awaitRoute = false
            default: return .failure(.badField("awaitRoute", "must be true or false"))
            }
        }

        var routeFor: RecordID?
        if let rawFor = field("for") {
            guard let text = string(rawFor), let target = RecordID(text) else {
                return .failure(.badField("for", "must be the id of a workout"))
            }
            routeFor = target
        }
        if kind == RecordKind.route && routeFor == nil { return .failure(.missingField("for")) }

        return .success(
            Record(
                id: id, kind: kind, time: time, subscribers: subscribers, awaitRoute: awaitRoute, routeFor: routeFor,
                bytes: bytes))
    }

    private static func firstNonSpace(_ bytes: [UInt8]) -> Int {
        bytes.firstIndex { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } ?? bytes.count
    }

    /// Foundation's words for what is wrong, on the slow path only.
    private static func whyNotJSON(_ bytes: [UInt8]) -> String {
        do {
            _ = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            return "not a single JSON value"
        } catch {
            return shortReason(error)
        }
    }

    private static func shortReason(_ error: any Error) -> String {
        let nsError = error as NSError
        let detail = nsError.userInfo[NSDebugDescriptionErrorKey] as? String ?? nsError.localizedDescription
        return String(detail.prefix(120))
    }
}
