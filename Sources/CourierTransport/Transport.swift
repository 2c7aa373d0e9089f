import CourierConfig

/// What a round needs from HTTP: start POSTs, and collect the ones that
/// finished. `HTTPClient` (one curl multi handle) is the real one; tests
/// script answers through it to drive retries, batch halving and the group
/// commit without sockets or sleeps.
package protocol Transport: AnyObject {
    /// Starts a POST with its checked header lines; its response comes out
    /// of `collect` under `tag`.
    func start(_ request: DeliveryRequest, headers: HeaderLines, tag: Int) throws(CurlError)

    /// Drives transfers for at most `wait`, or until `signal` (a file
    /// descriptor another thread makes readable) is readable; returns
    /// those that finished.
    func collect(wait: Duration, signal: Int32?) throws(CurlError) -> [(tag: Int, response: DeliveryResponse)]
}

extension Transport {
    /// Drives transfers for at most `wait`; returns those that finished.
    package func collect(wait: Duration) throws(CurlError) -> [(tag: Int, response: DeliveryResponse)] {
        try collect(wait: wait, signal: nil)
    }
}
