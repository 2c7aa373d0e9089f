import CourierPosix
import CourierRecords
import CourierSpool
import Foundation

extension Sink {
    /// `POST /transactions/batch`: each item is stored like a single record;
    /// `results[]` says `OK` (stored or a repeat), `CONFLICT` (the key was
    /// used with another body, or `if_match` failed) or `INVALID`. With
    /// `?atomic=true` nothing is stored unless every item would be `OK`, and
    /// the others are reported `ABORTED`.
    func batch(_ request: HTTPRequest, body: [UInt8]) -> HTTPResponse {
        guard (try? JSONSerialization.jsonObject(with: Data(body))) is [String: Any],
            let list = JSONSplice.value(of: "items", in: body), list.first == UInt8(ascii: "[")
        else { return .json(400, #"{"error":"expected {\"items\":[…]}"}"#) }
        let atomic = request.target.contains("atomic=true")
        let items = JSONSplice.arrayElements(list)
        do {
            let results = try store.withLock { store throws(SystemError) -> [(String, String)] in
                var verdicts: [(key: String, status: String)] = []
                var parsed: [(DeliveryKey, [UInt8], String?)?] = []
                for item in items {
                    let keyText =
                        JSONSplice.value(of: "idempotency_key", in: item).flatMap(JSONValidator.decodeString) ?? ""
                    guard let key = DeliveryKey(keyText), let payload = JSONSplice.value(of: "payload", in: item),
                        payload.first == UInt8(ascii: "{")
                    else {
                        verdicts.append((keyText, "INVALID"))
                        parsed.append(nil)
                        continue
                    }
                    let ifMatch = JSONSplice.value(of: "if_match", in: item).flatMap(JSONValidator.decodeString)
                    let verdict = try store.keep(payload, key: key, ifMatch: ifMatch, commit: !atomic)
                    verdicts.append((keyText, Self.status(verdict)))
                    parsed.append((key, payload, ifMatch))
                }
                guard atomic else { return verdicts }
                guard verdicts.allSatisfy({ $0.status == "OK" }) else {
                    return verdicts.map { ($0.key, $0.status == "OK" ? "ABORTED" : $0.status) }
                }
                for case (let key, let payload, let ifMatch)? in parsed {
                    _ = try store.keep(payload, key: key, ifMatch: ifMatch, commit: true)
                }
                return verdicts
            }
            for (key, status) in results { note(key, status == "OK" ? 200 : 409) }
            let entries = results.map { key, status in
                #"{"idempotency_key":"# + String(decoding: JSONValidator.encodeString(key), as: UTF8.self)
                    + #","status":"\#(status)"}"#
            }
            return .json(200, #"{"results":[\#(entries.joined(separator: ","))]}"#)
        } catch {
            return .json(503, #"{"error":"unable to store: \#(error)"}"#)
        }
    }

    static func status(_ verdict: SinkStore.Verdict) -> String {
        switch verdict {
        case .stored, .duplicate: return "OK"
        case .conflict, .preconditionFailed: return "CONFLICT"
        }
    }
}
