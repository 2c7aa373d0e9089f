import CCurl
import Glibc
import Testing

@testable import CourierPosix
@testable import CourierRound
@testable import CourierSpool
@testable import CourierTransport

/// A delivery whose socket could not be made for the process's own limits
/// (EMFILE, ENFILE, ENOMEM), through the scripted transport: the
/// in-process half of `SocketLimitTests`, where which request meets the
/// limit is decided by the script, not by timing.
@Suite struct OwnLimitTests {
    static func outOfFiles(_ request: DeliveryRequest, _ count: Int) -> DeliveryResponse {
        guard request.key == "r1" else { return ScriptedTransport.response(201) }
        let error = CurlError(CURLE_COULDNT_CONNECT, detail: "socket: Too many open files")
        return DeliveryResponse(
            status: 0, error: error, retryAfter: nil, answer: [], duration: .milliseconds(1),
            ownLimit: Errno(EMFILE))
    }

    @Test("a socket refused for the process's own limit stops the round, and its entry stays in sending/ uncounted")
    func theOwnLimitStopsTheRound() throws {
        let spool = try TemporarySpool(subscribers: [
            TemporarySpool.subscriber("alpha", url: "http://127.0.0.1:9/", concurrency: 4)
        ])
        try DeliveryStageTests.queue(spool, (0..<4).map { "r\($0)" }, subscriber: "alpha")
        let transport = ScriptedTransport(clock: FakeClock(), answer: Self.outOfFiles)
        let pass = try DeliveryStageTests.pass(spool, mode: .background, transport: transport)

        #expect {
            _ = try pass.run()
        } throws: { error in
            guard case .spool(let spoolError) = error as? RoundError else { return false }
            return spoolError.description.contains("open a socket for subscriber")
                && spoolError.description.contains("alpha")
        }
        // The answers that came with it are settled; r1 waits for the next
        // round's recovery under the same key.
        #expect(try spool.names(in: .sent).sorted() == ["r0@alpha.json", "r2@alpha.json", "r3@alpha.json"])
        #expect(try spool.names(in: .sending) == ["r1@alpha.json"])
        #expect(try spool.names(in: .needsAttention).isEmpty)
        let ledger = try spool.ledger()
        #expect(ledger.filter { $0.key == "r1" }.isEmpty, "no attempt counted: \(ledger.map(\.detail))")
        #expect(ledger.filter { $0.event == .sent }.map(\.key).sorted() == ["r0", "r2", "r3"])
    }
}
