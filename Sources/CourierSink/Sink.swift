import CourierPosix
import CourierRecords
import CourierSupport
import Foundation
import Glibc

/// The reference receiver (`courier sink`). It stores each record once per
/// Idempotency-Key, the maildir way, into `DIR/new/KEY.json` (`SinkStore`):
///
/// * `POST` (any other path): 201 the first time a key is seen, 200 when the
///   same key comes again with the same body, 422 with a different body;
///   `If-Match` is checked against the current ETag of the record named by
///   `updates` (else the record's own id): 412 when it does not match;
/// * `POST /transactions/batch[?atomic=true]`: per-item `results[]`;
/// * `GET /catalogs/NAME/delta?since=&cursor=&pageSize=` and `POST /sync/ack`;
/// * keys are kept 14 days (on disk: a restart keeps them); `gzip` bodies are
///   decoded; with a signing secret, unsigned or badly signed requests get 401;
/// * with `oauth`, `POST /oauth/token` issues tokens and every other request
///   needs one (`SinkOAuth`).
package final class Sink: Sendable {
    let store: Locked<SinkStore>
    private let signer: WebhookSigner?
    let catalogs: String?
    /// The member a delta page's cursor to the next page is sent as.
    let pageCursor: PageCursorName
    let oauth: SinkOAuth?
    package let directory: String
    /// `--log FILE`: one `KEY<TAB>STATUS` line per record received.
    private let requestLog: Int32?

    /// How long a key counts as seen, as the design promises.
    package static let keyLifetime: Duration = .seconds(14 * 86_400)
    /// Signatures older or newer than this are refused (replay protection,
    /// as Standard Webhooks recommends).
    package static let signatureTolerance: Duration = .seconds(300)
    /// A gzip body may not inflate past this.
    static let inflatedLimit = 64 << 20

    package init(
        directory: String, signingSecret: [UInt8]? = nil, catalogs: String? = nil,
        pageCursor: PageCursorName = .snakeCase, requestLog: String? = nil, oauth: SinkOAuth? = nil
    ) throws(SystemError) {
        do {
            self.requestLog = try requestLog.map { path throws(SystemError) in
                try system("open", onPath: path) { open($0, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640) }
            }
            for path in [directory, directory + "/tmp", directory + "/new"] {
                try PathOperations.makeDirectory(path, mode: 0o750)
            }
            store = Locked(
                SinkStore(
                    tmp: try DirectoryHandle.open(path: directory + "/tmp"),
                    new: try DirectoryHandle.open(path: directory + "/new"),
                    etags: try SinkETagJournal(in: DirectoryHandle.open(path: directory))))
        }
        self.signer = signingSecret.map(WebhookSigner.init)
        self.catalogs = catalogs
        self.pageCursor = pageCursor
        self.oauth = oauth
        self.directory = directory
    }

    deinit { if let requestLog { close(requestLog) } }

    /// The ETag the sink holds for an entity now, as `If-Match` must name it.
    func currentETag(of entity: EntityID) throws(SystemError) -> String? {
        try store.withLock { store throws(SystemError) -> String? in
            try store.etags.refresh()
            return store.etags.current[entity]
        }
    }

    /// Appends one line with one write(2), so concurrent requests never
    /// interleave within a line.
    func note(_ key: String, _ status: Int) {
        guard let requestLog else { return }
        let line = Array("\(SinkBytes.escaped(key))\t\(status)\n".utf8)
        _ = line.withUnsafeBytes { write(requestLog, $0.baseAddress, $0.count) }
    }

    package func handle(_ request: HTTPRequest) -> HTTPServerAction {
        .respond(answer(request))
    }

    func answer(_ request: HTTPRequest) -> HTTPResponse {
        if let oauth {
            if request.path == "/oauth/token" {
                guard request.method == "POST" else { return .json(405, #"{"error":"the token endpoint takes POST"}"#) }
                let response = oauth.issue(request)
                note("/oauth/token", response.status)
                return response
            }
            if let refusal = oauth.refusal(request) {
                // A record refused for its token is still noted, so the log
                // shows courier's retry after it fetched a new one.
                if let key = request.header("idempotency-key") { note(key, refusal.status) }
                return refusal
            }
        }
        switch (request.method, request.path) {
        case ("GET", "/health"):
            return .json(200, #"{"status":"ok"}"#)
        case ("GET", let path) where path.hasPrefix("/catalogs/") && path.hasSuffix("/delta"):
            return catalogDelta(request)
        case ("POST", "/sync/ack"):
            return acknowledge(request)
        case ("POST", "/transactions/batch"):
            return withBody(request) { batch(request, body: $0) }
        case ("POST", _):
            return withBody(request) { single(request, body: $0) }
        default:
            return .json(405, #"{"error":"only POST records, GET catalog deltas"}"#)
        }
    }

    /// Checks the signature over the bytes as sent, then decodes gzip.
    private func withBody(_ request: HTTPRequest, _ next: ([UInt8]) -> HTTPResponse) -> HTTPResponse {
        // Which of two keys counts is a guess a proxy in front may make
        // differently: refuse rather than pick one.
        for name in Self.singleHeaders where request.values(of: name).count > 1 {
            return .json(400, #"{"error":"more than one \#(name) header"}"#)
        }
        if let signer, let refusal = Self.checkSignature(request, signer: signer) { return .json(401, refusal) }
        switch request.header("content-encoding")?.lowercased() {
        case nil, "identity":
            return next(request.body)
        case "gzip":
            guard let inflated = Gzip.decompress(request.body, limit: Self.inflatedLimit) else {
                return .json(400, #"{"error":"the gzip body does not decode"}"#)
            }
            return next(inflated)
        case let other?:
            return .json(415, #"{"error":"unsupported Content-Encoding \#(other)"}"#)
        }
    }

    private func single(_ request: HTTPRequest, body: [UInt8]) -> HTTPResponse {
        guard let keyText = request.header("idempotency-key"), let key = IdempotencyKey(keyText) else {
            return .json(400, #"{"error":"missing or malformed Idempotency-Key"}"#)
        }
        // One pass checks the body and finds the entity it names.
        guard let outline = JSONOutline(body, levels: 1), outline.kind(of: outline.root) == .object else {
            return .json(400, #"{"error":"the body is not a JSON object"}"#)
        }
        let entity = SinkStore.entity(of: outline.root, in: outline)
        let ifMatch = request.header("if-match")
        do {
            let verdict = try store.withLock { store throws(SystemError) -> SinkStore.Verdict in
                try store.etags.refresh()
                var pending = SinkStore.Pending()
                let verdict = try store.decide(body, key: key, entity: entity, ifMatch: ifMatch, into: &pending)
                try store.commit(pending)
                return verdict
            }
            let response = verdict.response(key: key)
            note(key.description, response.status)
            return response
        } catch {
            return .json(503, #"{"error":"unable to store: \#(error)"}"#)
        }
    }
}
