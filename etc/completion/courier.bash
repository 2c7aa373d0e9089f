# bash completion for courier(1)
# Written by `courier completions bash` from the command table
# (Sources/CourierCLI/CommandTable.swift); `make completions` rewrites it.

_courier_list() {
    # What only courier knows (its configuration's subscribers and
    # catalogs, a spool's entries), asked of courier itself with the
    # line's --config and --spool, so it looks where the command will.
    # A value's leading ~/ is the shell's to expand, as it will
    # when the line runs; the words here are still as typed.
    local -a globals=()
    local i value
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --config | --spool)
                if [[ ${words[i + 1]} == = ]]; then value=${words[i + 2]}; else value=${words[i + 1]}; fi
                [[ $value == "~/"* ]] && value=$HOME/${value#"~/"}
                globals+=("${words[i]}=$value")
                ;;
            --config=* | --spool=*)
                value=${words[i]#*=}
                [[ $value == "~/"* ]] && value=$HOME/${value#"~/"}
                globals+=("${words[i]%%=*}=$value")
                ;;
        esac
    done
    "${words[0]}" "${globals[@]}" completions --list "$1" -- "$cur" 2>/dev/null
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
                mapfile -t COMPREPLY < <(_courier_list queued)
            fi
            ;;
        status)
            case $prev in
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            [[ -n $ended ]] || _courier_offer "--ages --json --output -o"
            ;;
        list)
            case $prev in
                --older-than) return ;;
                --subscriber)
                    mapfile -t COMPREPLY < <(_courier_list subscribers)
                    return
                    ;;
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--subscriber --older-than --json --output -o"
            else
                COMPREPLY=($(compgen -W "queued awaitingRoute sending sent failed needsAttention" -- "$cur"))
            fi
            ;;
        why)
            case $prev in
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--json --output -o"
            else
                mapfile -t COMPREPLY < <(_courier_list needsAttention,failed,sent,queued,awaitingRoute)
            fi
            ;;
        etag)
            case $prev in
                --subscriber)
                    mapfile -t COMPREPLY < <(_courier_list subscribers)
                    return
                    ;;
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            [[ -n $ended ]] || _courier_offer "--subscriber --json --output -o"
            ;;
        ack)
            case $prev in
                --older-than) return ;;
                --subscriber)
                    mapfile -t COMPREPLY < <(_courier_list subscribers)
                    return
                    ;;
                --state)
                    COMPREPLY=($(compgen -W "needsAttention" -- "$cur"))
                    return
                    ;;
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--all --subscriber --state --older-than --json --output -o"
            else
                mapfile -t COMPREPLY < <(_courier_list needsAttention)
            fi
            ;;
        resend)
            case $prev in
                --older-than) return ;;
                --subscriber)
                    mapfile -t COMPREPLY < <(_courier_list subscribers)
                    return
                    ;;
                --state)
                    COMPREPLY=($(compgen -W "failed needsAttention" -- "$cur"))
                    return
                    ;;
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--all --subscriber --state --older-than --json --output -o"
            else
                mapfile -t COMPREPLY < <(_courier_list failed,needsAttention)
            fi
            ;;
        delete)
            case $prev in
                --older-than) return ;;
                --subscriber)
                    mapfile -t COMPREPLY < <(_courier_list subscribers)
                    return
                    ;;
                --state)
                    COMPREPLY=($(compgen -W "needsAttention failed queued" -- "$cur"))
                    return
                    ;;
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--all --subscriber --state --older-than --json --output -o"
            else
                mapfile -t COMPREPLY < <(_courier_list needsAttention,failed,queued)
            fi
            ;;
        hold)
            case $prev in
                --reason) return ;;
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--reason --json --output -o"
            else
                mapfile -t COMPREPLY < <(_courier_list subscribers)
            fi
            ;;
        release)
            case $prev in
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--json --output -o"
            else
                mapfile -t COMPREPLY < <(_courier_list subscribers)
            fi
            ;;
        copy)
            case $prev in
                --subscriber)
                    mapfile -t COMPREPLY < <(_courier_list subscribers)
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--subscriber"
            else
                mapfile -t COMPREPLY < <(_courier_list needsAttention,failed,sent,queued,awaitingRoute)
            fi
            ;;
        backfill)
            case $prev in
                --since | --until) return ;;
                --subscriber)
                    mapfile -t COMPREPLY < <(_courier_list subscribers)
                    return
                    ;;
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
                --since | --until | --lines | -n | --key) return ;;
                --subscriber)
                    mapfile -t COMPREPLY < <(_courier_list subscribers,catalogs)
                    return
                    ;;
                --event)
                    COMPREPLY=($(compgen -W "accepted duplicate sent retry needsAttention invalid awaitingRoute routeAttached routeTimeout acknowledged resent copied backfilled recovered catalogSynced catalogFailed catalogDeleted deleted deferred held released" -- "$cur"))
                    return
                    ;;
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            [[ -n $ended ]] || _courier_offer "--since --until --lines -n --follow -f --subscriber --key --event --json --output -o"
            ;;
        check)
            case $prev in
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            [[ -n $ended ]] || _courier_offer "--json --output -o"
            ;;
        catalog)
            [[ -n $ended ]] || _courier_offer "sync status"
            ;;
        "catalog sync")
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--full --if-requested"
            else
                mapfile -t COMPREPLY < <(_courier_list catalogs)
            fi
            ;;
        "catalog status")
            case $prev in
                --output | -o)
                    COMPREPLY=($(compgen -W "text json" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--json --output -o"
            else
                mapfile -t COMPREPLY < <(_courier_list catalogs)
            fi
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
            case $prev in
                --list)
                    COMPREPLY=($(compgen -W "subscribers catalogs queued awaitingRoute sending sent failed needsAttention" -- "$cur"))
                    return
                    ;;
            esac
            if [[ -z $ended && $cur == -* ]]; then
                _courier_offer "--list"
            else
                COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur"))
            fi
            ;;
    esac
}

complete -F _courier courier
