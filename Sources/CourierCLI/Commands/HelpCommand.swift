/// `courier help`: the same commands and words as docs/design.md §6 and courier(1).
enum HelpCommand {
    static let usage = """
        usage: courier [--config FILE] [--spool DIR] [--quiet|--verbose] COMMAND

        Courier delivers JSON records dropped into a spool directory to HTTP
        subscribers, once per Idempotency-Key, through the state folders
        queued/ awaitingRoute/ sending/ sent/ failed/ needsAttention/.

        commands:
          init                             create the spool (mode 0750) and check it
          enqueue [FILE...|-]              validate records and drop them atomically into queued/
          run [--background|--foreground] [--wait]
                                           one round: recover, intake, routes, deliver, summary,
                                           notify; exits 0 at once if another round holds the spool
          send-now [--attention]           a foreground round: retries with backoff, waits for a running round,
                                           sends deferred entries due or not; --attention first takes
                                           every transient failure in needsAttention/ back to send it
          status [--json]                  counts per state (needsAttention first), last and next round
          list [STATE] [--json]            one line per item: state, key, subscriber, kind, time, age, last event
          why ENTRY                        the item's ledger history, where it is now, and why
          ack ENTRY...                     needsAttention/ -> failed/ (accept the failure)
          resend ENTRY...                  failed/ or needsAttention/ -> queued/ (same key)
          hold NAME [--reason TEXT]        send nothing to subscriber NAME until it is released; its
                                           entries wait in queued/ (.courier/held/NAME)
          release NAME                     end a hold: the next round sends NAME's entries
          copy ENTRY [--subscriber NAME]   a deliberate duplicate with the new key ID#N (N: next unused)
          backfill --since DATE --until DATE --subscriber NAME [--from DIR] [--dry-run]
                                           re-send history (from sent/, or the records in DIR) with
                                           the records' own keys; --until DATE includes that day
          prune [--retention DURATION] [--dry-run]
                                           remove ledger days and sent/ entries older than retention
                                           (183d) and tmp/ leftovers older than 36h; never failed/
                                           or needsAttention/
          log [--since DATE] [--until DATE] [--subscriber NAME] [--event EVENT] [--json]
                                           ledger lines, oldest first
          check                            validate the configuration and the spool; non-zero on a fault
          catalog sync [NAME] [--full]     pull catalog deltas page by page into spool/catalogs/NAME/
          catalog status [--json]          each catalog's version, age, failures, last duration
          sink --listen HOST:PORT --dir DIR [--signing-secret-file FILE] [--catalogs DIR] [--log FILE]
               [--max-connections N]       the reference receiver: stores each record once per key,
                                           answers batches, serves catalog deltas; past N (64)
                                           connections it answers 503
          demo                             a real round on a temporary spool against an embedded sink
          help                             this text
          --version                        print the version

        Events are logged on standard error, one line each (with <N> priorities when it is
        the journal): --quiet shows warnings and errors only, --verbose everything.
        ENTRY is a file name (KEY@SUB.json), KEY@SUB, or a KEY (all its subscribers).
        The configuration is the first found of --config FILE, $COURIER_CONFIG,
        ./etc/courier.conf and /etc/courier/courier.conf.
        Exit status (sysexits.h): 0 ok (a round that ran, whatever its items' fates),
        64 usage, 65 bad data, 74 I/O, 75 temporary, 78 configuration.
        """

    static func run(_ arguments: Arguments, _ invocation: Invocation) {
        invocation.output.line(usage)
    }

    static func printUsage(_ output: Output) {
        output.line(usage)
    }
}
