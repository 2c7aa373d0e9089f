import CourierIdentifiers

/// A table keyed by subscriber name, for what a delivery pass keeps per
/// subscriber (its read-ahead queue, its requests in flight, its breaker
/// limit and count) and looks up several times for every record.
///
/// Names are compared, not hashed, while the table is small: a name of up
/// to 15 bytes lives inside its `String`, so two equal ones compare as two
/// words, where a `Dictionary` lookup hashed the name through a witness
/// each time (about 400 instructions; some 17 lookups a record). A table of
/// more than `scanLimit` names keeps a hashed index as well, so a spool
/// with hundreds of subscribers pays a hash, not a scan.
///
/// Internal to this module on purpose: a generic type called from another
/// module is not specialized (`@inlinable package` is not inlined across
/// modules by this toolchain), and every lookup went through witnesses.
struct SubscriberTable<Value> {
    private var names: [SubscriberName] = []
    /// Never nil at rest: optional so that `subscript(_:)` can hand a
    /// value out in place, as `Dictionary`'s does, and a queue kept here
    /// is not copied to be appended to.
    private var values: [Value?] = []
    /// Position by name, once there are more than `scanLimit` names.
    private var index: [SubscriberName: Int]?

    static var scanLimit: Int { 16 }

    init() {}

    var isEmpty: Bool { names.isEmpty }

    var count: Int { names.count }

    subscript(name: SubscriberName) -> Value? {
        get { position(of: name).flatMap { values[$0] } }
        _modify {
            // However the access ends (a throw aborts it), a value set to
            // nil takes its name away, and a new one is added.
            if let at = position(of: name) {
                defer { if values[at] == nil { remove(at: at) } }
                yield &values[at]
            } else {
                var added: Value?
                defer { if let added { _ = append(name, added) } }
                yield &added
            }
        }
    }

    subscript(name: SubscriberName, default fallback: @autoclosure () -> Value) -> Value {
        get { position(of: name).flatMap { values[$0] } ?? fallback() }
        _modify {
            let at = position(of: name) ?? append(name, fallback())
            // Taken out while it is changed, so that it is not shared (a
            // queue appended to is not copied), and put back however the
            // access ends.
            var value = values[at].take() ?? fallback()
            defer { values[at] = value }
            yield &value
        }
    }

    @discardableResult mutating func removeValue(forKey name: SubscriberName) -> Value? {
        guard let at = position(of: name) else { return nil }
        let value = values[at]
        remove(at: at)
        return value
    }

    private func position(of name: SubscriberName) -> Int? {
        if let index { return index[name] }
        var at = 0
        while at < names.count {
            if names[at] == name { return at }
            at += 1
        }
        return nil
    }

    private mutating func append(_ name: SubscriberName, _ value: Value) -> Int {
        names.append(name)
        values.append(value)
        let at = names.count - 1
        if index != nil {
            index?[name] = at
        } else if names.count > Self.scanLimit {
            reindex()
        }
        return at
    }

    private mutating func remove(at position: Int) {
        names.remove(at: position)
        values.remove(at: position)
        if index != nil { reindex() }
    }

    private mutating func reindex() {
        guard names.count > Self.scanLimit else {
            index = nil
            return
        }
        var index: [SubscriberName: Int] = [:]
        index.reserveCapacity(names.count)
        for (at, name) in names.enumerated() { index[name] = at }
        self.index = index
    }
}

extension SubscriberTable: Sendable where Value: Sendable {}
