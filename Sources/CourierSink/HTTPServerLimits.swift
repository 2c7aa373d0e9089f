/// What one HTTP server will take on at once. The defaults suit the sink on
/// a small machine; tests shrink them to see each limit act quickly.
package struct HTTPServerLimits: Sendable {
    /// Connections served at once; the one past it is answered 503 and
    /// closed (see `HTTPServer`).
    package var maxConnections: Int
    /// The largest body a request may announce (413 beyond it).
    package var bodyLimit: Int
    /// From the moment the server waits for a request (the connection is
    /// accepted, or the answer before was sent) until its head has arrived:
    /// 408 and close when it passes with a request begun, a silent close
    /// for an idle connection. It never restarts on a byte received.
    package var headerDeadline: Duration
    /// From the same moment until the whole body has arrived: 408 and close.
    package var bodyDeadline: Duration
    /// For sending one answer: a client that does not read is hung up on.
    package var sendDeadline: Duration
    /// Request bytes held by all connections together, heads and bodies.
    package var bufferedBytesLimit: Int

    package init(
        maxConnections: Int = 64, bodyLimit: Int = 8 << 20, headerDeadline: Duration = .seconds(10),
        bodyDeadline: Duration = .seconds(30), sendDeadline: Duration = .seconds(30), bufferedBytesLimit: Int = 64 << 20
    ) {
        self.maxConnections = maxConnections
        self.bodyLimit = bodyLimit
        self.headerDeadline = headerDeadline
        self.bodyDeadline = bodyDeadline
        self.sendDeadline = sendDeadline
        self.bufferedBytesLimit = bufferedBytesLimit
    }
}
