import CourierConfig

/// A request's header lines as curl is given them, in order, in one
/// buffer: `Name: value` and a NUL each, or `Name:` for a header curl
/// would add and is told to leave out (Expect). Only checked fields
/// (`HTTPHeaderField`) become lines, so no line holds a NUL, CR or LF. The
/// lines a subscriber's requests share are made once per round
/// (`DeliveryHeaders`) and copied in as bytes; a request adds its own.
package struct HeaderLines: Sendable, Equatable {
    /// The lines, each ended by a NUL.
    package private(set) var bytes: [UInt8] = []
    package private(set) var count = 0

    package init() {}

    package init(_ fields: [HTTPHeaderField]) {
        for field in fields { append(field) }
    }

    package mutating func append(_ field: HTTPHeaderField) {
        bytes += field.name.utf8
        bytes.append(UInt8(ascii: ":"))
        if !field.value.isEmpty {
            bytes.append(UInt8(ascii: " "))
            bytes += field.value.utf8
        }
        bytes.append(0)
        count += 1
    }

    package mutating func append(_ lines: HeaderLines) {
        bytes += lines.bytes
        count += lines.count
    }

    package mutating func reserveCapacity(_ capacity: Int) { bytes.reserveCapacity(capacity) }

    /// The lines as text, without their NULs.
    package var lines: [String] {
        bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
    }
}
