import CourierIdentifiers
import CourierSpool
import Foundation

/// `courier etag ID [--subscriber NAME] [--json|--output FORMAT]`: the last etag a batch
/// subscriber's server gave for entity ID, for the script that writes the
/// next `UPDATE` of it (docs/design.md §8).
enum EtagCommand {
    static let command = Command(
        "etag", summary: "the etag a batch server last gave for entity ID, for its next UPDATE",
        usage: "ID [--subscriber NAME] [--json|--output FORMAT]",
        details: """
            ID is a record's id, or what an update names in `updates`. Prints the etag alone,
            for `etag=$(courier etag ID)`; exits 65 when none is kept, or when several
            subscribers gave one and --subscriber names none.
            """,
        options: Options.fields,
        example: "courier etag order-7 --subscriber outbox",
        run: { options, operands, invocation throws(CLIError) in try run(options, operands, invocation) })

    struct Options: CommandOptions {
        var subscriber: SubscriberName?
        var output = OutputForm()

        static let fields: [OptionField<Options>] =
            [
                .value(
                    "--subscriber", "NAME", "the etag this subscriber's server gave", \.subscriber,
                    completion: .subscribers)
            ]
            + OptionField.json("one object per subscriber: subscriber, entity, etag, server_id, key, time", \.output)
    }

    static func run(_ options: Options, _ operands: Operands, _ invocation: Invocation) throws(CLIError) {
        let json = options.output.isJSON
        let subscriber = options.subscriber
        let text = try operands.one("etag \(command.usage)")
        guard let entity = RecordID(text) else { throw .usage("\(text) is not a record id") }
        let store = EntityTagStore(spool: try invocation.readSpool())
        var found: [(subscriber: SubscriberName, tag: EntityTag)]
        do {
            found = try store.tags(of: entity)
        } catch {
            throw .spool(error)
        }
        if let subscriber { found = found.filter { $0.subscriber == subscriber } }
        guard !found.isEmpty else {
            throw .data(
                "no etag kept for \(entity)\(subscriber.map { " from \($0)" } ?? ""): no batch answer gave one yet, "
                    + "or it was pruned (`courier why \(entity)` shows its history)")
        }
        if json {
            for (name, tag) in found {
                invocation.output.json(
                    EntityTagJSON(
                        subscriber: name.value, entity: entity.value, etag: tag.etag, key: tag.key, time: tag.time,
                        serverID: tag.serverID))
            }
            return
        }
        guard found.count == 1, let only = found.first else {
            throw .data(
                "\(entity) has etags from \(found.map(\.subscriber.value).joined(separator: ", ")); "
                    + "name one with --subscriber")
        }
        invocation.output.line(only.tag.etag)
    }
}
