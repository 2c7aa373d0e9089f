import CourierIdentifiers
import CourierPosix
import CourierSpool
import Foundation

/// `courier list`: the items of some states, one row at a time in the
/// order the folders give them (as `ls -f` and Postfix's mailq do), so
/// that a million entries start printing at once rather than after they
/// are all read and sorted; `sort` is there for order.
package struct Listing {
    let spool: Spool

    package init(spool: Spool) { self.spool = spool }

    /// Which items.
    package struct Filter: Sendable {
        package var states: [SpoolState]
        /// The entry's subscriber; `-` for flagged files and intake files.
        package var subscriber: String?
        /// Only items taken in longer ago than this (`IntakeTimes`).
        package var olderThan: Duration?

        /// What `list` shows without a state: everything still waiting for
        /// a round or a person, not the delivered.
        package static let unsettled = SpoolState.attentionFirst.filter { $0 != .sent }

        package init(states: [SpoolState] = unsettled, subscriber: String? = nil, olderThan: Duration? = nil) {
            self.states = states
            self.subscriber = subscriber
            self.olderThan = olderThan
        }
    }

    /// One item with what `list` says of it.
    package struct Row {
        package let item: SpoolItem
        package let kind: String?
        /// The record's own `time`, as written.
        package let time: String?
        /// When the item was taken in (`IntakeTimes`): its age counts from it.
        package let takenIn: Timestamp
        package let last: LastEvent?
    }

    /// Visits the items `filter` selects, state by state, each as soon as
    /// it is found; `now` is what `olderThan` counts back from.
    package func forEach(_ filter: Filter, now: Timestamp, _ visit: (Row) -> Void) throws(SpoolError) {
        let history = try LastEvents(directory: spool.ledgerDirectory)
        let intake = IntakeTimes(spool: spool)
        for state in filter.states {
            let stream: DirectoryStream
            do { stream = try spool.directory(state).entries() } catch { throw SpoolError(error) }
            while true {
                let next: FileName?
                do { next = try stream.next() } catch { throw SpoolError(error) }
                guard let name = next else { break }
                let item = SpoolItem(name: name, state: state, entry: EntryName(fileName: name))
                if let subscriber = filter.subscriber, item.ledgerSubscriber != subscriber { continue }
                // Gone since the folder was read: a round or a person moved it.
                guard let status = try? spool.directory(state).status(of: name) else { continue }
                let takenIn = intake.of(item, status)
                if let olderThan = filter.olderThan, now - takenIn <= olderThan { continue }
                let facts = RecordFacts.read(item, in: spool)
                let last = try history.last(subscriber: item.entry?.subscriber, key: item.ledgerKey)
                visit(Row(item: item, kind: facts.kind, time: facts.time, takenIn: takenIn, last: last))
            }
        }
    }
}

/// The few facts `list` shows from inside an item's file; none for a file
/// that is not a JSON object (a flagged one).
struct RecordFacts {
    var kind: String?
    var time: String?

    static func read(_ item: SpoolItem, in spool: Spool) -> RecordFacts {
        var facts = RecordFacts()
        guard let bytes = try? spool.read(item.name, in: item.state, limit: 1 << 20),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return facts }
        facts.kind = object["kind"] as? String
        facts.time = object["time"] as? String
        return facts
    }
}
