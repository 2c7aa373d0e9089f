# fish completion for courier(1)
# Written by `courier completions fish` from the command table
# (Sources/CourierCLI/CommandTable.swift); `make completions` rewrites it.

function __courier_command
    # The command (and subcommand) so far, past the global options
    # and their values; after `--` every word is an operand.
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l command
    while set -q tokens[1]
        switch $tokens[1]
            case --
                break
            case --config --spool
                set -e tokens[1]
            case '-*'
            case '*'
                if not set -q command[1]
                    set command $tokens[1]
                else if not set -q command[2]; and contains -- $command[1] catalog
                    set -a command $tokens[1]
                end
        end
        set -e tokens[1]
    end
    string join ' ' -- $command
end

function __courier_using
    # True when the line names this command so far (none: no command yet).
    set -l current (__courier_command)
    test "$current" = "$argv"
end

function __courier_list
    # What only courier knows (its configuration's subscribers and
    # catalogs, a spool's entries), asked of courier itself with the
    # line's --config and --spool.
    set -l tokens (commandline -opc)
    set -l globals
    for i in (seq 2 (count $tokens))
        switch $tokens[$i]
            case --config --spool
                set -a globals $tokens[$i] $tokens[(math $i + 1)]
            case '--config=*' '--spool=*'
                set -a globals $tokens[$i]
        end
    end
    $tokens[1] $globals completions --list $argv[1] -- (commandline -ct) 2>/dev/null
end

complete -c courier -f
complete -c courier -l config -r -F -d 'the configuration file, instead of the one searched for'
complete -c courier -l spool -x -a '(__fish_complete_directories)' -d 'use this spool instead of the configuration\'s'
complete -c courier -l quiet -s q -d 'log only warnings and errors on standard error'
complete -c courier -l verbose -s v -d 'log every event, and debugging detail'
complete -c courier -l help -s h -d 'show the usage of courier, or of the command'
complete -c courier -l version -d 'print the version'
complete -c courier -n '__courier_using' -a init -d 'create the spool (mode 0750) and check it'
complete -c courier -n '__courier_using init' -l group -x -d 'the producers\' group, which may write tmp/ and queued/'
complete -c courier -n '__courier_using' -a enqueue -d 'validate records and drop them atomically into queued/'
complete -c courier -n '__courier_using enqueue' -r -F
complete -c courier -n '__courier_using' -a run -d 'one round: recover, intake, routes, deliver, summary, notify'
complete -c courier -n '__courier_using run' -l background -d 'one attempt per item, then needsAttention/ (the default)'
complete -c courier -n '__courier_using run' -l foreground -d 'retry with backoff, and wait for a round that holds the spool'
complete -c courier -n '__courier_using run' -l wait -d 'wait for a round that holds the spool instead of exiting 0'
complete -c courier -n '__courier_using' -a send-now -d 'a foreground round: retries with backoff, waits for the spool'
complete -c courier -n '__courier_using send-now' -l attention -d 'first take every transient failure in needsAttention/ back to queued/ and send it'
complete -c courier -n '__courier_using send-now' -x -a '(__courier_list queued)'
complete -c courier -n '__courier_using' -a status -d 'counts per state, needsAttention first; the last and next round'
complete -c courier -n '__courier_using status' -l ages -d 'also count items per subscriber and state by age: <5m, <1h, <1d, older'
complete -c courier -n '__courier_using status' -l json -d 'one JSON object'
complete -c courier -n '__courier_using status' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using' -a list -d 'one line per item, with its state, key, subscriber, kind and last event'
complete -c courier -n '__courier_using list' -l subscriber -x -a '(__courier_list subscribers)' -d 'this subscriber\'s items only; - for flagged and intake files'
complete -c courier -n '__courier_using list' -l older-than -x -d 'items whose file is older than this (30m, 2h, 7d), by mtime'
complete -c courier -n '__courier_using list' -l json -d 'one JSON object per line'
complete -c courier -n '__courier_using list' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using list' -x -a 'queued awaitingRoute sending sent failed needsAttention'
complete -c courier -n '__courier_using' -a why -d 'the item\'s ledger history, where it is now, and why'
complete -c courier -n '__courier_using why' -l json -d 'one JSON object: {query, items:[{entry, state, key, subscriber, why, notes, history}]}'
complete -c courier -n '__courier_using why' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using why' -x -a '(__courier_list needsAttention,failed,sent,queued,awaitingRoute)'
complete -c courier -n '__courier_using' -a etag -d 'the etag a batch server last gave for entity ID, for its next UPDATE'
complete -c courier -n '__courier_using etag' -l subscriber -x -a '(__courier_list subscribers)' -d 'the etag this subscriber\'s server gave'
complete -c courier -n '__courier_using etag' -l json -d 'one object per subscriber: subscriber, entity, etag, server_id, key, time'
complete -c courier -n '__courier_using etag' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using' -a ack -d 'needsAttention/ -> failed/ (accept the failure)'
complete -c courier -n '__courier_using ack' -l all -d 'every entry in needsAttention/'
complete -c courier -n '__courier_using ack' -l subscriber -x -a '(__courier_list subscribers)' -d 'only this subscriber\'s items'
complete -c courier -n '__courier_using ack' -l state -x -a 'needsAttention' -d 'only items in this state'
complete -c courier -n '__courier_using ack' -l older-than -x -d 'only items whose file is older (1h, 2d)'
complete -c courier -n '__courier_using ack' -l json -d 'one JSON object: what moved and what did not'
complete -c courier -n '__courier_using ack' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using ack' -x -a '(__courier_list needsAttention)'
complete -c courier -n '__courier_using' -a resend -d 'failed/ or needsAttention/ -> queued/ (same key)'
complete -c courier -n '__courier_using resend' -l all -d 'every entry in failed/ and needsAttention/'
complete -c courier -n '__courier_using resend' -l subscriber -x -a '(__courier_list subscribers)' -d 'only this subscriber\'s items'
complete -c courier -n '__courier_using resend' -l state -x -a 'failed needsAttention' -d 'only items in this state'
complete -c courier -n '__courier_using resend' -l older-than -x -d 'only items whose file is older (1h, 2d)'
complete -c courier -n '__courier_using resend' -l json -d 'one JSON object: what moved and what did not'
complete -c courier -n '__courier_using resend' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using resend' -x -a '(__courier_list failed,needsAttention)'
complete -c courier -n '__courier_using' -a delete -d 'remove items from needsAttention/, failed/ or queued/ (ledger: deleted)'
complete -c courier -n '__courier_using delete' -l all -d 'every entry in needsAttention/ and failed/ (queued/ only with --state queued)'
complete -c courier -n '__courier_using delete' -l subscriber -x -a '(__courier_list subscribers)' -d 'only this subscriber\'s items'
complete -c courier -n '__courier_using delete' -l state -x -a 'needsAttention failed queued' -d 'only items in this state'
complete -c courier -n '__courier_using delete' -l older-than -x -d 'only items whose file is older (1h, 2d)'
complete -c courier -n '__courier_using delete' -l json -d 'one JSON object: what moved and what did not'
complete -c courier -n '__courier_using delete' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using delete' -x -a '(__courier_list needsAttention,failed,queued)'
complete -c courier -n '__courier_using' -a hold -d 'send subscriber NAME nothing until it is released (.courier/held/NAME)'
complete -c courier -n '__courier_using hold' -l reason -x -d 'why, as status shows it'
complete -c courier -n '__courier_using hold' -l json -d 'one JSON object: {subscriber, held, since, reason}'
complete -c courier -n '__courier_using hold' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using hold' -x -a '(__courier_list subscribers)'
complete -c courier -n '__courier_using' -a release -d 'end a hold: the next round sends NAME\'s entries'
complete -c courier -n '__courier_using release' -l json -d 'one JSON object: {subscriber, held, since, reason, queued}'
complete -c courier -n '__courier_using release' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using release' -x -a '(__courier_list subscribers)'
complete -c courier -n '__courier_using' -a copy -d 'a deliberate duplicate with the new key ID#N (N: next unused)'
complete -c courier -n '__courier_using copy' -l subscriber -x -a '(__courier_list subscribers)' -d 'queue the copy for this subscriber instead'
complete -c courier -n '__courier_using copy' -x -a '(__courier_list needsAttention,failed,sent,queued,awaitingRoute)'
complete -c courier -n '__courier_using' -a backfill -d 're-send history to one subscriber, with the records\' own keys'
complete -c courier -n '__courier_using backfill' -l since -x -d 'from this day (YYYY-MM-DD) or RFC 3339 time'
complete -c courier -n '__courier_using backfill' -l until -x -d 'up to this time, exclusive; a bare date includes that day'
complete -c courier -n '__courier_using backfill' -l subscriber -x -a '(__courier_list subscribers)' -d 'the subscriber to queue them for'
complete -c courier -n '__courier_using backfill' -l from -x -a '(__fish_complete_directories)' -d 'the record files in DIR instead of sent/'
complete -c courier -n '__courier_using backfill' -l dry-run -d 'say what would be queued, and queue nothing'
complete -c courier -n '__courier_using' -a prune -d 'remove ledger days, sent/ entries and tmp/ leftovers past their time'
complete -c courier -n '__courier_using prune' -l retention -x -d 'keep this long (183d, 12h…) instead of the configuration\'s'
complete -c courier -n '__courier_using prune' -l dry-run -d 'say what would be removed, and remove nothing'
complete -c courier -n '__courier_using' -a log -d 'ledger lines, oldest first; today\'s unless told otherwise'
complete -c courier -n '__courier_using log' -l since -x -d 'from this time on (default: today, 00:00 UTC)'
complete -c courier -n '__courier_using log' -l until -x -d 'before this time'
complete -c courier -n '__courier_using log' -l lines -s n -x -d 'only the last N matching lines'
complete -c courier -n '__courier_using log' -l follow -s f -d 'then print new lines as they are written'
complete -c courier -n '__courier_using log' -l subscriber -x -a '(__courier_list subscribers,catalogs)' -d 'this subscriber\'s (or catalog\'s) lines only; - for files and routes'
complete -c courier -n '__courier_using log' -l key -x -d 'this key\'s lines only (exactly: ID, or ID#N for a copy)'
complete -c courier -n '__courier_using log' -l event -x -a 'accepted duplicate sent retry needsAttention invalid awaitingRoute routeAttached routeTimeout acknowledged resent copied backfilled recovered catalogSynced catalogFailed catalogDeleted deleted deferred held released' -d 'lines of this event only'
complete -c courier -n '__courier_using log' -l json -d 'one JSON object per line'
complete -c courier -n '__courier_using log' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using' -a check -d 'validate the configuration and the spool; non-zero on a fault'
complete -c courier -n '__courier_using check' -l json -d 'one JSON object: {config, spool, ok, subscribers, catalogs, findings}'
complete -c courier -n '__courier_using check' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using' -a catalog -d 'catalog syncs: the server\'s items into spool/catalogs/NAME/'
complete -c courier -n '__courier_using catalog' -a sync -d 'pull catalog deltas page by page into spool/catalogs/NAME/'
complete -c courier -n '__courier_using catalog sync' -l full -d 'start from the beginning, and remove what the server no longer has'
complete -c courier -n '__courier_using catalog sync' -l if-requested -d 'sync only if .courier/sync-requested exists, then remove it'
complete -c courier -n '__courier_using catalog sync' -x -a '(__courier_list catalogs)'
complete -c courier -n '__courier_using catalog' -a status -d 'each catalog\'s since, age, failures, last duration, next sync'
complete -c courier -n '__courier_using catalog status' -l json -d 'one JSON object: {"catalogs":[…]}'
complete -c courier -n '__courier_using catalog status' -l output -s o -x -a 'text json' -d 'text (the default) or json, as journalctl spells it'
complete -c courier -n '__courier_using catalog status' -x -a '(__courier_list catalogs)'
complete -c courier -n '__courier_using' -a sink -d 'the reference receiver: one record per key, batches, catalog deltas'
complete -c courier -n '__courier_using sink' -l listen -x -d 'the address to listen on (port 0: any free one)'
complete -c courier -n '__courier_using sink' -l dir -x -a '(__fish_complete_directories)' -d 'where received records are stored'
complete -c courier -n '__courier_using sink' -l signing-secret-file -r -F -d 'refuse requests without a valid Standard Webhooks signature'
complete -c courier -n '__courier_using sink' -l catalogs -x -a '(__fish_complete_directories)' -d 'serve DIR/NAME/ as catalog NAME'
complete -c courier -n '__courier_using sink' -l page-cursor -x -a 'next_cursor nextCursor' -d 'what a delta page calls its cursor: next_cursor (the default) or nextCursor'
complete -c courier -n '__courier_using sink' -l log -r -F -d 'append KEY<TAB>STATUS for each record received'
complete -c courier -n '__courier_using sink' -l max-connections -x -d 'connections served at once, 1 to 10000 (64)'
complete -c courier -n '__courier_using sink' -l oauth -x -d 'issue tokens to this client (POST /oauth/token) and want them'
complete -c courier -n '__courier_using sink' -l oauth-token-lifetime -x -d 'how long an issued token lives (1h)'
complete -c courier -n '__courier_using' -a demo -d 'a real round on a temporary spool against embedded sinks'
complete -c courier -n '__courier_using' -a help -d 'list the commands, or show one command\'s usage and options'
complete -c courier -n '__courier_using help' -x -a 'init enqueue run send-now status list why etag ack resend delete hold release copy backfill prune log check catalog sink demo help version completions'
complete -c courier -n '__courier_using' -a version -d 'print the version'
complete -c courier -n '__courier_using' -a completions -d 'print the bash, zsh or fish completion script'
complete -c courier -n '__courier_using completions' -l list -x -a 'subscribers catalogs queued awaitingRoute sending sent failed needsAttention' -d 'the words to offer: subscribers, catalogs, or STATE[,STATE…]'
complete -c courier -n '__courier_using completions' -x -a 'bash zsh fish'
