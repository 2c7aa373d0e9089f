#!/usr/bin/env bash
# The empty round (issue 23, item 4): what a timer wake-up with nothing to
# send costs, for one or more courier binaries side by side, with hyperfine
# (apt-get install hyperfine). Each binary gets `courier version` (process
# start alone) and `courier run` on an empty spool whose subscriber is never
# contacted, interleaved by hyperfine's runs; then `perf stat` of the round
# for its CPU time, page faults and context switches.
#
# Usage: bench/empty-round.sh [--runs N] BINARY...   (default: .build/release/courier)
# Prints hyperfine's summary and a markdown table (median and mean wall,
# user and system CPU, from hyperfine's JSON) on standard output.
set -euo pipefail
runs=200
if [ "${1:-}" = "--runs" ]; then
    runs=$2
    shift 2
fi
[ $# -gt 0 ] || set -- .build/release/courier
command -v hyperfine >/dev/null || { echo "empty-round: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 69; }
work=$(mktemp -d /tmp/courier-empty-round-XXXXXX)
trap 'rm -rf "$work"' EXIT
spool=$work/spool
"$1" --spool "$spool" init >/dev/null
# Port 9 (discard) on loopback: nothing is ever sent to it by an empty round.
cat >"$work/courier.conf" <<EOF
[courier]
spool = $spool
device-id = bench
settle = 0s
notify = off

[subscriber bench]
url = http://127.0.0.1:9/hook
concurrency = 16
EOF
commands=()
for binary in "$@"; do
    commands+=("$binary version" "$binary --config $work/courier.conf --quiet run")
done
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --warmup 10 --runs "$runs" --export-json "$work/result.json" "${commands[@]}"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/result.json" <<'EOF'
import json, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
print("\n| command | median wall ms | mean wall ms | min ms | user ms | system ms |")
print("|---|---:|---:|---:|---:|---:|")
for r in results:
    times = [t * 1000 for t in r["times"]]
    print(f"| `{r['command']}` | {statistics.median(times):.1f} | {statistics.mean(times):.1f} | {min(times):.1f} "
          f"| {r['user'] * 1000:.1f} | {r['system'] * 1000:.1f} |")
EOF
if command -v perf >/dev/null; then
    for binary in "$@"; do
        echo
        echo "perf stat -r 50 $binary --config \$W/courier.conf --quiet run:"
        perf stat -r 50 "$binary" --config "$work/courier.conf" --quiet run 2>&1 >/dev/null |
            grep -E "task-clock|context-switches|page-faults|elapsed"
    done
fi
