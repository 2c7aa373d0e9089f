/// Why a body has no outline the sink can read.
enum UnreadableBody: Error {
    /// Not one JSON value in UTF-8.
    case notJSON
    /// Valid JSON with more values to note than `Sink.outlineNodes`.
    case tooManyValues

    /// The answer: `notJSON` as the route words it, `tooManyValues` as 413.
    func response(or notJSON: String) -> HTTPResponse {
        switch self {
        case .notJSON: return .json(400, notJSON)
        case .tooManyValues:
            return .json(413, #"{"error":"the body holds more than \#(Sink.outlineNodes) values to read"}"#)
        }
    }
}
