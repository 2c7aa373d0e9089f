/// What one HTTP server will take on at once. The defaults suit the sink on
/// a small machine; tests shrink them to see each limit act quickly.
public struct HTTPServerLimits: Sendable {
    /// Connections served at once; the one past it is answered 503 and
    /// closed (see `HTTPServer`).
    public var maxConnections: Int
    /// The largest body a request may announce (413 beyond it).
    public var bodyLimit: Int

    public init(maxConnections: Int = 64, bodyLimit: Int = 8 << 20) {
        self.maxConnections = maxConnections
        self.bodyLimit = bodyLimit
    }
}
