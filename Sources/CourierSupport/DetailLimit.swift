/// The most bytes of a server's answer or an error that courier keeps: the
/// ledger's detail column is cut there, and the transport captures no more
/// of an answer than that (plus what redaction may shorten).
package enum DetailLimit {
    package static let bytes = 200
}
