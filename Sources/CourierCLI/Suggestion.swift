/// "did you mean `status`?": the word a person most likely meant by a
/// mistyped one, as git and systemctl offer it. A unique prefix counts
/// (`stat` for `status`), else the one word within a small edit distance
/// (a letter left out, added, changed, or two swapped).
enum Suggestion {
    /// The closest of `candidates`, or nil when none is close or two are
    /// as close (a guess between two is no help).
    static func closest(to word: String, among candidates: [String]) -> String? {
        let typed = Array(word.lowercased())
        guard !typed.isEmpty, !candidates.contains(word) else { return nil }
        let prefixed = candidates.filter { $0.lowercased().hasPrefix(word.lowercased()) }
        if prefixed.count == 1 && typed.count >= 2 { return prefixed.first }
        // Dashes are not letters a person mistypes: `--jsn` is one edit from `--json`.
        let letters = typed.drop { $0 == "-" }.count
        let allowed = letters <= 3 ? 1 : 2
        var best: [String] = []
        var bestDistance = allowed + 1
        for candidate in candidates {
            let distance = Self.distance(typed, Array(candidate.lowercased()))
            guard distance <= allowed else { continue }
            if distance < bestDistance {
                best = [candidate]
                bestDistance = distance
            } else if distance == bestDistance {
                best.append(candidate)
            }
        }
        return best.count == 1 ? best.first : nil
    }

    /// ` (did you mean `status`?)`, or nothing.
    static func hint(for word: String, among candidates: [String]) -> String {
        closest(to: word, among: candidates).map { " (did you mean `\($0)`?)" } ?? ""
    }

    /// Optimal string alignment distance: insertions, deletions,
    /// substitutions and swaps of two neighbours each cost one.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
