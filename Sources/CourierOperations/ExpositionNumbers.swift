import CourierPosix

/// Numbers as the metrics file prints them: decimal fractions written out
/// from integers, never through a Double, so a timestamp reads
/// `1796140223.265` and not `1796140223.2649999`.
extension MetricsFile.Exposition {
    /// Unix time with milliseconds.
    static func seconds(_ time: Timestamp) -> String {
        let (milliseconds, _) = time.nanosecondsSinceEpoch.quotientAndRemainder(dividingBy: 1_000_000)
        return decimal(milliseconds, places: 3)
    }

    /// A duration kept in milliseconds, in seconds.
    static func seconds(milliseconds: Int64) -> String { decimal(milliseconds, places: 3) }

    /// A ratio to six places, without trailing zeros (`0.05`, `1`).
    static func ratio(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        var text = decimal(Int64((value * 1_000_000).rounded()), places: 6)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// `value` / 10^places, with exactly `places` digits after the point.
    static func decimal(_ value: Int64, places: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let (whole, fraction) = value.magnitude.quotientAndRemainder(dividingBy: UInt64(scale))
        let digits = String(fraction)
        let sign = value < 0 ? "-" : ""
        return sign + String(whole) + "." + String(repeating: "0", count: places - digits.count) + digits
    }
}
