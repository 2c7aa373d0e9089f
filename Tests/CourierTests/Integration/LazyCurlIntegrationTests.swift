import Foundation
import Testing

/// libcurl is loaded when a round first has something to send (CCurl's
/// dlopen), so a wake-up with nothing to do starts without its 37 shared
/// libraries. The dynamic loader says what it loads when asked
/// (`LD_DEBUG=files`, on standard error).
@Suite(.tags(.integration)) struct LazyCurlTests {
    @Test("a round with nothing to send never loads libcurl, and one with a record loads it to send it")
    func curlIsLoadedOnlyToSend() throws {
        let server = try LoopbackServer(status: 204)
        let directory = TemporaryDirectory("lazy-curl")
        let binary = try CourierBinary.locate()
        let config = try binary.initializeSpool(in: directory, subscriberURL: server.url)

        let empty = try binary.run(["--config", config, "run"], environment: ["LD_DEBUG": "files"])
        #expect(empty.status == 0, "\(empty.error.suffix(500))")
        // The loader did report (else the next check would prove nothing).
        #expect(empty.error.contains("file=libc.so.6"))
        #expect(
            !empty.error.contains("libcurl"), "\(empty.error.split(separator: "\n").filter { $0.contains("curl") })")
        #expect(server.requests.isEmpty)

        try directory.write(#"{"id":"r-1","kind":"sleep"}"#, to: "spool/queued/r1.json")
        let busy = try binary.run(["--config", config, "run"], environment: ["LD_DEBUG": "files"])
        #expect(busy.output.contains("1 sent"), "\(busy.output)")
        #expect(busy.error.contains("file=libcurl.so.4 [0];  dynamically loaded by"), "\(busy.error.suffix(800))")
        #expect(server.requests.count == 1)
    }
}
