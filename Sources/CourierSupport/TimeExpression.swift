import CourierPosix

/// The times `courier log --since/--until` take, journalctl's forms read in
/// UTC: the ledger's days are UTC days and every time courier prints ends
/// in `Z`, so a day or a time copied from its output means what it says
/// (docs/decisions.md, "Command line").
package enum TimeExpression: Sendable, Equatable {
    case now, today, yesterday, tomorrow
    /// `-1h`: this long before now.
    case ago(Duration)
    /// A day, a time or `@EPOCH`: the same whenever it is read.
    case at(Timestamp)

    /// What a usage error lists.
    package static let forms =
        "today, yesterday, tomorrow, now, -30m, -1h, -2d, YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] (UTC), @EPOCH or RFC 3339"

    /// `text` read once, to be resolved against a `now` later; nil for
    /// anything that is not one of `forms`.
    package init?(_ text: String) {
        switch text {
        case "now": self = .now
        case "today": self = .today
        case "yesterday": self = .yesterday
        case "tomorrow": self = .tomorrow
        default:
            if text.hasPrefix("-") {
                // `-1h`: an age, in the units the configuration uses.
                guard let age = Units.duration(String(text.dropFirst())) else { return nil }
                self = .ago(age)
            } else if let time = text.hasPrefix("@")
                ? Self.epoch(text.dropFirst()) : Self.dayAndTime(text) ?? Timestamp(dateOrTime: text)
            {
                self = .at(time)
            } else {
                return nil
            }
        }
    }

    /// The point in time, with `now` given so the answer depends on
    /// nothing else.
    package func resolved(now: Timestamp) -> Timestamp {
        let today = now.utcDayStart
        switch self {
        case .now: return now
        case .today: return today
        case .yesterday: return today - .seconds(86_400)
        case .tomorrow: return today + .seconds(86_400)
        case .ago(let age): return now - age
        case .at(let time): return time
        }
    }

    /// `text` as a point in time; nil for anything that is not one of `forms`.
    package static func parse(_ text: String, now: Timestamp) -> Timestamp? {
        TimeExpression(text)?.resolved(now: now)
    }

    /// `@1764486000` or `@1764486000.25`: seconds since 1970, as date +%s
    /// prints them; within the years RFC 3339 times may take here.
    private static func epoch(_ text: Substring) -> Timestamp? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 11, whole.allSatisfy(\.isASCIIDigit),
            let seconds = Int64(whole), let last = Timestamp.dayStart(year: 2261, month: 12, day: 31),
            seconds < last.secondsSinceEpoch + 86_400
        else { return nil }
        var nanoseconds: Int64 = 0
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy(\.isASCIIDigit),
                let digits = Int64(fraction)
            else { return nil }
            nanoseconds = digits
            for _ in fraction.count..<9 { nanoseconds *= 10 }
        }
        return Timestamp(nanosecondsSinceEpoch: seconds * 1_000_000_000 + nanoseconds)
    }

    /// `2026-11-30 07:00` or `2026-11-30T07:00:30`: a UTC wall-clock time
    /// without a zone, the form journalctl takes (RFC 3339 requires one).
    private static func dayAndTime(_ text: String) -> Timestamp? {
        let bytes = Array(text.utf8)
        guard bytes.count == 16 || bytes.count == 19, bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"),
            let day = Timestamp(dateOrTime: String(decoding: bytes[..<10], as: UTF8.self))
        else { return nil }
        let clock = bytes[11...].split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var values: [Int64] = []
        for part in clock {
            guard part.count == 2, part.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return nil
            }
            values.append(Int64(part.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }))
        }
        guard values.count == (bytes.count == 16 ? 2 : 3) else { return nil }
        let (hour, minute, second) = (values[0], values[1], values.count == 3 ? values[2] : 0)
        guard hour < 24, minute < 60, second < 60 else { return nil }
        return day + .seconds(hour * 3600 + minute * 60 + second)
    }
}

extension Timestamp {
    /// 00:00 UTC of this time's day: where `today` and the ledger's day
    /// file begin.
    package var utcDayStart: Timestamp {
        let seconds = secondsSinceEpoch
        let rest = seconds % 86_400
        return Timestamp(secondsSinceEpoch: seconds - (rest < 0 ? rest + 86_400 : rest))
    }
}
