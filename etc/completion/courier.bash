# bash completion for courier(1)
# Written by `courier completions bash` from the command table
# (Sources/CourierCLI/CommandTable.swift); `make completions` rewrites it.

_courier_entries() {
    # Entries of the spool's state folders, by file name.
    local spool=${COURIER_SPOOL:-/var/spool/courier}
    local i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --spool) spool=${words[i + 1]} ;;
            --spool=*) spool=${words[i]#--spool=} ;;
        esac
    done
    local state
    for state in "$@"; do
        [[ -d $spool/$state ]] && ls -1 "$spool/$state" 2>/dev/null
    done
}

_courier_offer() {
    # These words, and the global options once an option is begun.
    COMPREPLY=($(compgen -W "$1" -- "$cur"))
    if [[ $cur == -* ]]; then
        COMPREPLY+=($(compgen -W "--config --spool --quiet -q --verbose -v --help -h --version" -- "$cur"))
    fi
}

_courier() {
    local cur prev words cword split
    _init_completion -s || return

    case $prev in
        --config)
            _filedir
            return
            ;;
        --spool)
            _filedir -d
            return
            ;;
    esac

    # The command (and subcommand) so far, past the global options and
    # their values; after `--` every word is an operand.
    local command="" ended="" i
    for ((i = 1; i < cword; i++)); do
        [[ -n $ended ]] && continue
        case ${words[i]} in
            --) ended=1 ;;
            --config | --spool) ((i++)) ;;
            -*) ;;
            *)
                if [[ -z $command ]]; then
                    command=${words[i]}
                elif [[ " catalog " == *" $command "* ]]; then
                    command+=" ${words[i]}"
                fi
                ;;
        esac
    done

    case $command in
        "")
            _courier_offer "init enqueue run send-now status list why etag ack resend delete hold release copy backfill prune log check catalog sink demo help version completions"
            ;;
        init)
            case $prev in
                --group) return ;;
            esac
            [[ -n $ended ]] || _courier_offer "--group"
            ;;
        enqueue)
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer ""
            else
                _filedir
            fi
            ;;
        run)
            [[ -n $ended ]] || _courier_offer "--background --foreground --wait"
            ;;
        send-now)
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--attention"
            else
                COMPREPLY=($(compgen -W "$(_courier_entries queued)" -- "$cur"))
            fi
            ;;
        status)
            [[ -n $ended ]] || _courier_offer "--ages --json"
            ;;
        list)
            case $prev in
                --subscriber | --older-than) return ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--subscriber --older-than --json"
            else
                COMPREPLY=($(compgen -W "queued awaitingRoute sending sent failed needsAttention" -- "$cur"))
            fi
            ;;
        why)
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--json"
            else
                COMPREPLY=($(compgen -W "$(_courier_entries needsAttention failed sent queued awaitingRoute)" -- "$cur"))
            fi
            ;;
        etag)
            case $prev in
                --subscriber) return ;;
            esac
            [[ -n $ended ]] || _courier_offer "--subscriber --json"
            ;;
        ack)
            case $prev in
                --subscriber | --older-than) return ;;
                --state)
                    COMPREPLY=($(compgen -W "needsAttention" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--all --subscriber --state --older-than --json"
            else
                COMPREPLY=($(compgen -W "$(_courier_entries needsAttention)" -- "$cur"))
            fi
            ;;
        resend)
            case $prev in
                --subscriber | --older-than) return ;;
                --state)
                    COMPREPLY=($(compgen -W "failed needsAttention" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--all --subscriber --state --older-than --json"
            else
                COMPREPLY=($(compgen -W "$(_courier_entries failed needsAttention)" -- "$cur"))
            fi
            ;;
        delete)
            case $prev in
                --subscriber | --older-than) return ;;
                --state)
                    COMPREPLY=($(compgen -W "needsAttention failed queued" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--all --subscriber --state --older-than --json"
            else
                COMPREPLY=($(compgen -W "$(_courier_entries needsAttention failed queued)" -- "$cur"))
            fi
            ;;
        hold)
            case $prev in
                --reason) return ;;
            esac
            [[ -n $ended ]] || _courier_offer "--reason --json"
            ;;
        release)
            [[ -n $ended ]] || _courier_offer "--json"
            ;;
        copy)
            case $prev in
                --subscriber) return ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--subscriber"
            else
                COMPREPLY=($(compgen -W "$(_courier_entries needsAttention failed sent queued awaitingRoute)" -- "$cur"))
            fi
            ;;
        backfill)
            case $prev in
                --since | --until | --subscriber) return ;;
                --from)
                    _filedir -d
                    return
                    ;;
            esac
            [[ -n $ended ]] || _courier_offer "--since --until --subscriber --from --dry-run"
            ;;
        prune)
            case $prev in
                --retention) return ;;
            esac
            [[ -n $ended ]] || _courier_offer "--retention --dry-run"
            ;;
        log)
            case $prev in
                --since | --until | --lines | -n | --subscriber | --key) return ;;
                --event)
                    COMPREPLY=($(compgen -W "accepted duplicate sent retry needsAttention invalid awaitingRoute routeAttached routeTimeout acknowledged resent copied backfilled recovered catalogSynced catalogFailed catalogDeleted deleted deferred held released" -- "$cur"))
                    return
                    ;;
            esac
            [[ -n $ended ]] || _courier_offer "--since --until --lines -n --follow -f --subscriber --key --event --json"
            ;;
        check)
            [[ -n $ended ]] || _courier_offer "--json"
            ;;
        catalog)
            [[ -n $ended ]] || _courier_offer "sync status"
            ;;
        "catalog sync")
            [[ -n $ended ]] || _courier_offer "--full --if-requested"
            ;;
        "catalog status")
            [[ -n $ended ]] || _courier_offer "--json"
            ;;
        sink)
            case $prev in
                --listen | --max-connections | --oauth | --oauth-token-lifetime) return ;;
                --dir)
                    _filedir -d
                    return
                    ;;
                --signing-secret-file)
                    _filedir
                    return
                    ;;
                --catalogs)
                    _filedir -d
                    return
                    ;;
                --page-cursor)
                    COMPREPLY=($(compgen -W "next_cursor nextCursor" -- "$cur"))
                    return
                    ;;
                --log)
                    _filedir
                    return
                    ;;
            esac
            [[ -n $ended ]] || _courier_offer "--listen --dir --signing-secret-file --catalogs --page-cursor --log --max-connections --oauth --oauth-token-lifetime"
            ;;
        demo)
            [[ -n $ended ]] || _courier_offer ""
            ;;
        help)
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer ""
            else
                COMPREPLY=($(compgen -W "init enqueue run send-now status list why etag ack resend delete hold release copy backfill prune log check catalog sink demo help version completions" -- "$cur"))
            fi
            ;;
        version)
            [[ -n $ended ]] || _courier_offer ""
            ;;
        completions)
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer ""
            else
                COMPREPLY=($(compgen -W "bash zsh" -- "$cur"))
            fi
            ;;
    esac
}

complete -F _courier courier
