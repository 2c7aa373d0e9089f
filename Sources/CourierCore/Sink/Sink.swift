import Foundation
import Glibc
import Synchronization

/// The reference receiver (`courier sink`): stores each record once per
/// Idempotency-Key, the maildir way, into `DIR/new/KEY.json`.
///
/// * 201 the first time a key is seen, 200 when the same key comes again
///   with the same body, 422 when it comes with a different body;
/// * keys are kept 14 days: an older file no longer counts as seen;
/// * with a signing secret, requests without a valid Standard Webhooks
///   signature get 401.
public final class Sink: Sendable {
    private let store: Mutex<Store>
    private let signer: WebhookSigner?
    public let directory: String

    /// How long a key counts as seen, as the design promises.
    public static let keyLifetime: Duration = .seconds(14 * 86_400)
    /// Signatures older or newer than this are refused (replay protection,
    /// as Standard Webhooks recommends).
    public static let signatureTolerance: Duration = .seconds(300)

    private struct Store {
        let tmp: DirectoryHandle
        let new: DirectoryHandle
        var counter = 0
    }

    public init(directory: String, signingSecret: [UInt8]? = nil) throws(SpoolError) {
        for path in [directory, directory + "/tmp", directory + "/new"] where mkdir(path, 0o750) != 0 && errno != EEXIST
        {
            throw .operation("create directory", path: path, .current)
        }
        do {
            let tmp = try DirectoryHandle.open(path: directory + "/tmp")
            let new = try DirectoryHandle.open(path: directory + "/new")
            store = Mutex(Store(tmp: tmp, new: new))
        } catch {
            throw .operation("open", path: directory, error)
        }
        self.signer = signingSecret.map(WebhookSigner.init)
        self.directory = directory
    }

    public func handle(_ request: HTTPRequest) -> HTTPServerAction {
        .respond(answer(request))
    }

    func answer(_ request: HTTPRequest) -> HTTPResponse {
        if request.method == "GET" && request.path == "/health" { return .json(200, #"{"status":"ok"}"#) }
        guard request.method == "POST" else { return .json(405, #"{"error":"only POST is accepted"}"#) }
        guard let keyText = request.header("idempotency-key"), let key = DeliveryKey(keyText) else {
            return .json(400, #"{"error":"missing or malformed Idempotency-Key"}"#)
        }
        if let signer, let refusal = Self.checkSignature(request, signer: signer) { return .json(401, refusal) }
        guard (try? JSONSerialization.jsonObject(with: Data(request.body))) is [String: Any] else {
            return .json(400, #"{"error":"the body is not a JSON object"}"#)
        }
        do {
            return try store.withLock { store throws(Errno) -> HTTPResponse in
                try Self.keep(request.body, as: FileName("\(key).json"), in: &store, key: key)
            }
        } catch {
            return .json(503, #"{"error":"unable to store: \#(error)"}"#)
        }
    }

    private static func keep(_ body: [UInt8], as name: FileName, in store: inout Store, key: DeliveryKey) throws(Errno)
        -> HTTPResponse
    {
        if let existing = try store.new.status(of: name), Timestamp.now() - existing.modified < keyLifetime {
            let stored = try store.new.openFile(name, flags: O_RDONLY).read(upTo: body.count + 1)
            return stored == body
                ? .json(200, #"{"status":"duplicate","key":"\#(key)"}"#)
                : .json(422, #"{"error":"Idempotency-Key \#(key) was used before with a different body"}"#)
        }
        store.counter += 1
        let staged = FileName("\(Timestamp.now().compact).\(getpid())_\(store.counter).\(key)")
        let file = try store.tmp.openFile(staged, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o640)
        try file.write(body)
        try file.sync()
        try store.tmp.rename(staged, to: store.new, as: name)
        try store.new.sync()
        return .json(201, #"{"status":"stored","key":"\#(key)"}"#)
    }

    /// Nil when the request's Standard Webhooks headers verify.
    private static func checkSignature(_ request: HTTPRequest, signer: WebhookSigner) -> String? {
        guard let id = request.header("webhook-id"), let stamp = request.header("webhook-timestamp"),
            let seconds = Int64(stamp), let signature = request.header("webhook-signature")
        else { return #"{"error":"missing webhook-id, webhook-timestamp or webhook-signature"}"# }
        let skew = abs((Timestamp.now() - Timestamp(secondsSinceEpoch: seconds)).nanoseconds)
        guard skew < signatureTolerance.nanoseconds else {
            return #"{"error":"webhook-timestamp is too far from now"}"#
        }
        guard signer.verify(id: id, timestamp: seconds, body: request.body, header: signature) else {
            return #"{"error":"webhook-signature does not verify"}"#
        }
        return nil
    }
}
