import CCurl
import CourierConfig

/// A failed libcurl call or transfer, with curl's own words.
package struct CurlError: Error, Sendable, Equatable, CustomStringConvertible {
    package let code: UInt32
    package let message: String

    init(_ code: CURLcode, detail: String = "") {
        self.code = code.rawValue
        // curl's error buffer already says what strerror says, with detail.
        self.message = detail.isEmpty ? String(cString: courier_easy_strerror(code)) : detail
    }

    init(multi code: CURLMcode) {
        self.code = UInt32(bitPattern: code.rawValue)
        self.message = String(cString: courier_multi_strerror(code))
    }

    package var description: String { message }

    package var isTimeout: Bool { code == CURLE_OPERATION_TIMEDOUT.rawValue }

    /// Failures that no retry can fix: the certificate does not verify, the
    /// URL cannot be used. They need a person, not a backoff.
    package var needsPerson: Bool {
        [
            CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_URL_MALFORMAT,
            CURLE_UNSUPPORTED_PROTOCOL, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
        ].map(\.rawValue).contains(code)
    }
}

/// curl_global_init runs once per process, before the first handle.
private let curlGlobalInitialisation: CURLcode = courier_global_init(Int(CURL_GLOBAL_DEFAULT))

/// One libcurl easy handle, reused across transfers so that its
/// connection and TLS session caches are kept.
final class CurlEasy {
    let handle: UnsafeMutableRawPointer

    /// A POST of `body`. COPYPOSTFIELDS: curl keeps its own copy, so the
    /// array may go as soon as this returns.
    func setPostBody(_ body: [UInt8]) throws(CurlError) {
        try set(CURLOPT_POST, 1)
        try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(body.count))
        let copied = body.withUnsafeBytes { bytes in
            courier_easy_setopt_pointer(
                handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
        }
        guard copied == CURLE_OK else { throw CurlError(copied) }
    }

    init() throws(CurlError) {
        guard curlGlobalInitialisation == CURLE_OK else { throw CurlError(curlGlobalInitialisation) }
        guard let handle = courier_easy_init() else { throw CurlError(CURLE_OUT_OF_MEMORY) }
        self.handle = handle
    }

    deinit { courier_easy_cleanup(handle) }

    func reset() { courier_easy_reset(handle) }

    func set(_ option: CURLoption, _ value: Int) throws(CurlError) {
        try check(courier_easy_setopt_long(handle, option, value), option)
    }

    func set(_ option: CURLoption, offset value: Int64) throws(CurlError) {
        try check(courier_easy_setopt_offset(handle, option, curl_off_t(value)), option)
    }

    func set(_ option: CURLoption, _ value: String) throws(CurlError) {
        // withCString, not the implicit conversion: that copies the string
        // into a new array first, and a request's URL is set per record.
        try check(value.withCString { courier_easy_setopt_string(handle, option, $0) }, option)
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlError) {
        try check(courier_easy_setopt_pointer(handle, option, value), option)
    }

    func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?) throws(CurlError) {
        try check(courier_easy_setopt_slist(handle, option, value), option)
    }

    func set(_ option: CURLoption, writer: curl_write_callback) throws(CurlError) {
        try check(courier_easy_setopt_write_function(handle, option, writer), option)
    }

    func set(_ option: CURLoption, opener: curl_opensocket_callback) throws(CurlError) {
        try check(courier_easy_setopt_opensocket_function(handle, option, opener), option)
    }

    /// CURLINFO_OS_ERRNO: the errno of the transfer's last failed connect.
    /// libcurl 7.88 leaves it 0 when the socket itself cannot be made.
    func osErrno() -> Int32 {
        var value = 0
        guard courier_easy_getinfo_long(handle, CURLINFO_OS_ERRNO, &value) == CURLE_OK else { return 0 }
        return Int32(truncatingIfNeeded: value)
    }

    func responseCode() -> Int {
        var code = 0
        guard courier_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK else { return 0 }
        return code
    }

    /// The last value of a response header, if the server sent it.
    /// `name` is a literal: libcurl is given its bytes, NUL-ended, as they
    /// are (a String would be copied into a new C string per answer).
    func header(_ name: StaticString) -> String? {
        precondition(name.hasPointerRepresentation, "a header name of more than one character")
        var found: UnsafeMutablePointer<curl_header>?
        let cName = UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
        guard courier_easy_header(handle, cName, 0, UInt32(CURLH_HEADER), -1, &found) == CURLHE_OK, let found,
            let value = found.pointee.value
        else { return nil }
        return String(cString: value)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(CurlError) {
        guard code == CURLE_OK else {
            throw CurlError(
                code, detail: "\(String(cString: courier_easy_strerror(code))) (setting option \(option.rawValue))")
        }
    }
}

/// A curl_slist of request headers in one allocation, freed with the
/// value: the nodes, then a copy of the lines, each node's `data` pointing
/// at its line. curl only reads the list it is given (CURLOPT_HTTPHEADER,
/// until the transfer ends), so it need not come from
/// `curl_slist_append`, which allocates twice per line.
final class CurlHeaderList {
    private let storage: UnsafeMutableRawPointer?
    let list: UnsafeMutablePointer<curl_slist>?

    /// Only checked fields become lines: see `HeaderLines`.
    init(_ lines: HeaderLines) {
        guard lines.count > 0 else {
            storage = nil
            list = nil
            return
        }
        let nodeBytes = lines.count * MemoryLayout<curl_slist>.stride
        let storage = UnsafeMutableRawPointer.allocate(
            byteCount: nodeBytes + lines.bytes.count, alignment: MemoryLayout<curl_slist>.alignment)
        let nodes = storage.bindMemory(to: curl_slist.self, capacity: lines.count)
        lines.bytes.withUnsafeBytes { bytes in
            // The lines in one copy, then a node for each NUL-ended line.
            let copy = UnsafeMutableRawBufferPointer(start: storage + nodeBytes, count: bytes.count)
            copy.copyMemory(from: bytes)
            let text = copy.bindMemory(to: CChar.self)
            guard let base = text.baseAddress else { return }
            var start = 0
            for index in 0..<lines.count {
                let end = text[start...].firstIndex(of: 0) ?? text.count - 1
                let next = index + 1 < lines.count ? nodes + index + 1 : nil
                (nodes + index).initialize(to: curl_slist(data: base + start, next: next))
                start = end + 1
            }
        }
        self.storage = storage
        self.list = nodes
    }

    deinit { storage?.deallocate() }
}

/// The multi handle: many transfers over shared, kept-alive connections,
/// driven from one plain loop.
final class CurlMulti {
    let handle: UnsafeMutableRawPointer

    init() throws(CurlError) {
        guard curlGlobalInitialisation == CURLE_OK else { throw CurlError(curlGlobalInitialisation) }
        guard let handle = courier_multi_init() else { throw CurlError(CURLE_OUT_OF_MEMORY) }
        self.handle = handle
    }

    deinit { courier_multi_cleanup(handle) }

    func add(_ easy: CurlEasy) throws(CurlError) {
        let code = courier_multi_add_handle(handle, easy.handle)
        guard code == CURLM_OK else { throw CurlError(multi: code) }
    }

    func remove(_ easy: CurlEasy) {
        // Removing a handle this multi owns cannot fail in a way that
        // leaves anything to undo; the code is informative only.
        _ = courier_multi_remove_handle(handle, easy.handle)
    }

    /// Runs whatever can run without waiting; returns how many transfers
    /// are still going.
    func perform() throws(CurlError) -> Int {
        var running: Int32 = 0
        let code = courier_multi_perform(handle, &running)
        guard code == CURLM_OK else { throw CurlError(multi: code) }
        return Int(running)
    }

    /// Sleeps until a transfer has something to do, `signal` (a file
    /// descriptor) is readable, or `timeout` passes. True when `signal` is.
    func poll(timeout: Duration, signal: Int32? = nil) throws(CurlError) -> Bool {
        var ready: Int32 = 0
        let milliseconds = Int32(clamping: max(0, timeout.milliseconds))
        var extra = curl_waitfd(fd: signal ?? -1, events: Int16(CURL_WAIT_POLLIN), revents: 0)
        let code =
            signal == nil
            ? courier_multi_poll(handle, nil, 0, milliseconds, &ready)
            : courier_multi_poll(handle, &extra, 1, milliseconds, &ready)
        guard code == CURLM_OK else { throw CurlError(multi: code) }
        return extra.revents & Int16(CURL_WAIT_POLLIN) != 0
    }

    /// The transfers that finished since the last call: easy handle and result.
    func finished() -> [(easy: UnsafeMutableRawPointer, result: CURLcode)] {
        var done: [(UnsafeMutableRawPointer, CURLcode)] = []
        var remaining: Int32 = 0
        while let message = courier_multi_info_read(handle, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            done.append((easy, message.pointee.data.result))
        }
        return done
    }
}
