# bash completion for courier(1)

_courier_entries() {
    # Entries of the spool's state folders, by file name.
    local spool=${COURIER_SPOOL:-/var/spool/courier}
    local i
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == --spool ]] && spool=${COMP_WORDS[i + 1]}
    done
    local state
    for state in "$@"; do
        [[ -d $spool/$state ]] && ls -1 "$spool/$state" 2>/dev/null
    done
}

_courier_held() {
    # The held subscribers: the names in .courier/held/.
    local spool=${COURIER_SPOOL:-/var/spool/courier}
    local i
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == --spool ]] && spool=${COMP_WORDS[i + 1]}
    done
    [[ -d $spool/.courier/held ]] && ls -1 "$spool/.courier/held" 2>/dev/null
}

_courier() {
    local cur prev words cword
    _init_completion || return

    local commands="init enqueue run send-now status list why ack resend hold release copy backfill log prune check sink demo help"
    local states="queued awaitingRoute sending sent failed needsAttention"
    local events="accepted duplicate sent retry deferred needsAttention invalid awaitingRoute routeAttached routeTimeout acknowledged resent copied backfilled recovered held released"

    case $prev in
        --reason)
            return
            ;;
        --config | --from | --dir | --signing-secret-file)
            _filedir
            return
            ;;
        --spool)
            _filedir -d
            return
            ;;
        --event)
            COMPREPLY=($(compgen -W "$events" -- "$cur"))
            return
            ;;
    esac

    local command="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --config | --spool) ((i++)) ;;
            -*) ;;
            *)
                command=${words[i]}
                break
                ;;
        esac
    done

    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$commands --config --spool --quiet --verbose --version" -- "$cur"))
        return
    fi

    case $command in
        run) COMPREPLY=($(compgen -W "--background --foreground --wait" -- "$cur")) ;;
        send-now) COMPREPLY=($(compgen -W "--attention" -- "$cur")) ;;
        hold) COMPREPLY=($(compgen -W "--reason" -- "$cur")) ;;
        release) COMPREPLY=($(compgen -W "$(_courier_held)" -- "$cur")) ;;
        status) COMPREPLY=($(compgen -W "--json" -- "$cur")) ;;
        list) COMPREPLY=($(compgen -W "$states --json" -- "$cur")) ;;
        ack) COMPREPLY=($(compgen -W "$(_courier_entries needsAttention)" -- "$cur")) ;;
        resend) COMPREPLY=($(compgen -W "$(_courier_entries needsAttention failed)" -- "$cur")) ;;
        why | copy) COMPREPLY=($(compgen -W "$(_courier_entries needsAttention failed sent queued awaitingRoute) --subscriber" -- "$cur")) ;;
        backfill) COMPREPLY=($(compgen -W "--since --until --subscriber --from --dry-run" -- "$cur")) ;;
        log) COMPREPLY=($(compgen -W "--since --until --subscriber --event --json" -- "$cur")) ;;
        prune) COMPREPLY=($(compgen -W "--retention --dry-run" -- "$cur")) ;;
        enqueue) _filedir json ;;
        sink) COMPREPLY=($(compgen -W "--listen --dir --signing-secret-file" -- "$cur")) ;;
    esac
}

complete -F _courier courier
