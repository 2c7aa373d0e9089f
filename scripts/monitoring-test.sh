#!/usr/bin/env bash
# Monitoring with the real parts, on 127.0.0.1: Debian's prometheus-node-exporter
# reads courier's metrics file (--collector.textfile.directory), Debian's
# prometheus scrapes it every second with etc/prometheus/courier-alerts.yml
# loaded (every `for:` shortened to 2s, evaluation every second), and:
#   1. the subscriber is down and held, its records wait in queued/, and their
#      intake time is set two hours back (touch -d: the same file times an old
#      backlog has): CourierBacklogOld must fire for it (/api/v1/alerts);
#   2. the subscriber is back: `courier release` and `courier send-now` deliver
#      the records, and the alert must clear.
# A missing program is a SKIP with its reason, outside CI; with CI=true a failure.
# Usage: scripts/monitoring-test.sh [--binary PATH] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."

BINARY=""
KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
        --binary) BINARY=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "usage: $0 [--binary PATH] [--keep]" >&2; exit 64 ;;
    esac
done

skip() {
    if [ "${CI:-}" = true ]; then
        echo "monitoring-test: FAIL: $* (CI=true: every program must be there)" >&2
        exit 1
    fi
    echo "SKIP: monitoring-test: $*"
    exit 0
}
for program in prometheus prometheus-node-exporter curl python3; do
    command -v "$program" >/dev/null || skip "$program is not installed (scripts/test-packages.txt)"
done

if [ -z "$BINARY" ]; then
    swift build -c release >/dev/null
    BINARY=.build/release/courier
fi
BINARY=$(readlink -f "$BINARY")
RULES=$(readlink -f etc/prometheus/courier-alerts.yml)

work=$(mktemp -d /tmp/courier-monitoring-XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ "$KEEP" -eq 1 ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

fail() {
    echo "monitoring-test: FAIL: $*" >&2
    for log in "$work"/*.log; do
        [ -f "$log" ] || continue
        echo "--- $log (last lines)" >&2
        tail -n 20 "$log" >&2
    done
    exit 1
}

# A port no one listens on now; the program that takes it is checked to be up.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds, polling every
# 0.2 s; the deadline is generous, for a loaded machine, and says what it waited for.
wait_for() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$((SECONDS + seconds))
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || fail "$what: not within ${seconds}s"
        sleep 0.2
    done
}

# The reference sink: a subscriber that can be down (not started) or up.
start_sink() {
    : > "$work/sink.log"
    "$BINARY" sink --listen 127.0.0.1:0 --dir "$work/inbox" 2>>"$work/sink.log" &
    pids+=($!)
    wait_for 30 "the sink listening" grep -q "sink listening on 127.0.0.1:" "$work/sink.log"
    sink_port=$(sed -n 's/.*sink listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/sink.log" | head -n 1)
}

# The spool, its subscriber at a port where nothing listens yet.
sink_port=$(free_port)
mkdir -p "$work/textfile"
write_config() {
    cat > "$work/courier.conf" <<CONF
[courier]
spool = $work/spool
settle = 0s
notify = off
metrics-file = $work/textfile/courier.prom

[subscriber alpha]
url = http://127.0.0.1:$1/records
CONF
}
write_config "$sink_port"
courier() { "$BINARY" --config "$work/courier.conf" "$@"; }
courier init >/dev/null

# node_exporter with the textfile collector only, and Prometheus scraping it.
exporter_port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$exporter_port" --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$work/textfile" >"$work/node-exporter.log" 2>&1 &
pids+=($!)
wait_for 30 "node_exporter answering on 127.0.0.1:$exporter_port" \
    curl -fs -o /dev/null "http://127.0.0.1:$exporter_port/metrics"

# The shipped rules, with every `for:` at 2s so that the test takes seconds.
sed -E 's/^( *for: ).*/\12s/' "$RULES" > "$work/courier-alerts.yml"
grep -q 'for: 2s' "$work/courier-alerts.yml" || fail "no for: in $RULES to shorten"
prometheus_port=$(free_port)
cat > "$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $work/courier-alerts.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$exporter_port']
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prometheus_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)
api="http://127.0.0.1:$prometheus_port"
wait_for 60 "Prometheus ready on 127.0.0.1:$prometheus_port" curl -fs -o /dev/null "$api/-/ready"

# alert_state NAME SUBSCRIBER: firing, pending or none, as /api/v1/alerts says.
alert_state() {
    curl -fs "$api/api/v1/alerts" | python3 -c '
import json, sys
name, subscriber = sys.argv[1], sys.argv[2]
alerts = json.load(sys.stdin)["data"]["alerts"]
states = [a["state"] for a in alerts
          if a["labels"].get("alertname") == name and a["labels"].get("subscriber") == subscriber]
print(states[0] if states else "none")' "$1" "$2"
}
alert_is() { [ "$(alert_state CourierBacklogOld alpha)" = "$1" ]; }
# scraped VALUE: Prometheus has the backlog's age for alpha in queued/ at VALUE or more.
scraped_age_at_least() {
    curl -fsG "$api/api/v1/query" \
        --data-urlencode 'query=courier_oldest_item_age_seconds{state="queued",subscriber="alpha"}' |
        python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; sys.exit(0 if r and float(r[0]["value"][1]) >= float(sys.argv[1]) else 1)' "$1"
}

# 1. alpha is down: held, three records wait in queued/, two hours old.
courier hold alpha --reason "down: monitoring-test" >/dev/null
for n in 1 2 3; do echo "{\"id\":\"m-$n\",\"kind\":\"sleep\"}" | courier enqueue - >/dev/null; done
courier run >/dev/null 2>&1
[ "$(ls "$work/spool/queued" | grep -c '@alpha.json$')" -eq 3 ] || fail "the held records are not waiting in queued/"
two_hours_ago=$(( $(date +%s) - 7200 ))
touch -d "@$two_hours_ago" "$work"/spool/queued/*@alpha.json
courier run >/dev/null 2>&1 # rewrites the metrics file: still held, still waiting
grep -q '^courier_oldest_item_age_seconds{state="queued",subscriber="alpha"} 7[0-9][0-9][0-9]$' \
    "$work/textfile/courier.prom" || fail "courier.prom does not show a two-hour backlog: $(grep oldest "$work/textfile/courier.prom")"
wait_for 60 "Prometheus scraping the two-hour backlog through node_exporter" scraped_age_at_least 7000
started=$SECONDS
wait_for 90 "CourierBacklogOld firing for alpha" alert_is firing
echo "monitoring-test: CourierBacklogOld fired for alpha $((SECONDS - started)) s after Prometheus saw the backlog"

# 2. alpha is back: release it and send now; the backlog goes, and the alert.
start_sink
write_config "$sink_port"
courier release alpha >/dev/null
courier send-now >/dev/null 2>&1 || fail "send-now failed"
[ "$(ls "$work/inbox/new" | wc -l)" -eq 3 ] || fail "the sink did not get the three records"
grep -q '^courier_oldest_item_age_seconds{state="queued",subscriber="alpha"} 0$' "$work/textfile/courier.prom" ||
    fail "courier.prom still shows a backlog"
started=$SECONDS
wait_for 90 "CourierBacklogOld clearing for alpha" alert_is none
echo "monitoring-test: CourierBacklogOld cleared $((SECONDS - started)) s after send-now"
echo "monitoring-test: ok"
