import Foundation

/// A `kind`: a word subscribers filter on.
public enum RecordKind {
    public static let route = "route"
    public static let workout = "workout"

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
        case .tooLarge(let size, let limit): return "record is \(size) bytes, more than max-record-size (\(limit))"
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

/// A validated record (DESIGN §2). The bytes are kept exactly: they are
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
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            return .failure(.notJSON(Self.shortReason(error)))
        }
        guard let fields = object as? [String: Any] else { return .failure(.notAnObject) }

        guard let rawID = fields["id"] else { return .failure(.missingField("id")) }
        guard let idText = rawID as? String, !(rawID is NSNumber) else {
            return .failure(.badField("id", "must be a string"))
        }
        if let problem = RecordID.problem(with: idText) { return .failure(.badField("id", problem)) }
        guard let id = RecordID(idText) else { return .failure(.badField("id", "is not an id")) }

        guard let rawKind = fields["kind"] else { return .failure(.missingField("kind")) }
        guard let kind = rawKind as? String, RecordKind.isValid(kind) else {
            return .failure(.badField("kind", "must be a word of 1–64 [A-Za-z0-9_-]"))
        }

        var time: Timestamp?
        if let rawTime = fields["time"] {
            guard let text = rawTime as? String, let parsed = Timestamp(rfc3339: text) else {
                return .failure(.badField("time", "must be an RFC 3339 time such as 2026-11-30T07:00:00Z"))
            }
            time = parsed
        }

        var subscribers: [SubscriberName]?
        if let rawSubscribers = fields["subscribers"] {
            guard let names = rawSubscribers as? [Any], !names.isEmpty else {
                return .failure(.badField("subscribers", "must be a non-empty list of names"))
            }
            var parsed: [SubscriberName] = []
            for name in names {
                guard let text = name as? String, let subscriber = SubscriberName(text) else {
                    return .failure(.badField("subscribers", "\(name) is not a subscriber name"))
                }
                if !parsed.contains(subscriber) { parsed.append(subscriber) }
            }
            subscribers = parsed
        }

        var awaitRoute = false
        if let rawAwait = fields["awaitRoute"] {
            guard let flag = Self.boolean(rawAwait) else {
                return .failure(.badField("awaitRoute", "must be true or false"))
            }
            awaitRoute = flag
        }

        var routeFor: RecordID?
        if let rawFor = fields["for"] {
            guard let text = rawFor as? String, let target = RecordID(text) else {
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

    /// JSON `true`/`false` only; Foundation would also let 1 and 0 pass.
    private static func boolean(_ value: Any) -> Bool? {
        guard let number = value as? NSNumber else { return nil }
        let type = String(cString: number.objCType)
        guard type == "c" || type == "B" else { return nil }
        return number.boolValue
    }

    private static func shortReason(_ error: any Error) -> String {
        let nsError = error as NSError
        let detail = nsError.userInfo[NSDebugDescriptionErrorKey] as? String ?? nsError.localizedDescription
        return String(detail.prefix(120))
    }
}
