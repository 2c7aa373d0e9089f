/// Durations and sizes as the config and the command line write them.
package enum Units {
    /// `500ms`, `15s`, `5m`, `1h`, `183d`; a bare number is refused, so a
    /// unit is never guessed.
    package static func duration(_ text: String) -> Duration? {
        let units: [(suffix: String, nanoseconds: Int64)] = [
            ("ms", 1_000_000), ("s", 1_000_000_000), ("m", 60_000_000_000), ("h", 3_600_000_000_000),
            ("d", 86_400_000_000_000),
        ]
        for unit in units where text.hasSuffix(unit.suffix) {
            let number = text.dropLast(unit.suffix.count)
            guard !number.isEmpty, number.allSatisfy(\.isASCIIDigit), let value = Int64(number),
                value <= Int64.max / unit.nanoseconds
            else { return nil }
            return .nanoseconds(value * unit.nanoseconds)
        }
        return nil
    }

    /// `1048576`, `512KiB`, `1MiB`, `1GiB` (also `KB`/`MB` read as binary).
    package static func size(_ text: String) -> Int? {
        let units: [(suffix: String, factor: Int)] = [
            ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30),
            ("B", 1), ("", 1),
        ]
        for unit in units where text.hasSuffix(unit.suffix) {
            let number = text.dropLast(unit.suffix.count)
            guard !number.isEmpty, number.allSatisfy(\.isASCIIDigit), let value = Int(number),
                value <= Int.max / unit.factor
            else { return nil }
            return value * unit.factor
        }
        return nil
    }

    /// The inverse of `duration`, in the largest unit that is exact.
    package static func describe(_ duration: Duration) -> String {
        let ns = duration.nanoseconds
        for (suffix, factor) in [
            ("d", Int64(86_400_000_000_000)), ("h", 3_600_000_000_000), ("m", 60_000_000_000), ("s", 1_000_000_000),
        ]
        where ns != 0 && ns % factor == 0 {
            return "\(ns / factor)\(suffix)"
        }
        return "\(ns / 1_000_000)ms"
    }
}

extension Character {
    package var isASCIIDigit: Bool { isASCII && isNumber }
}
