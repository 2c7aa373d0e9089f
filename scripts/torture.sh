#!/usr/bin/env bash
# The long torture runs (docs/reliability.md):
#   1. kill -9: campaigns of RECORDS records against `courier sink`, each
#      `courier run` killed at a random point, until KILLS kills; then rounds
#      to completion, and the promises checked: every record in sent/ exactly
#      once, none in two states, no orphan in tmp/, every key received at
#      least once, the sink stores each exactly once; duplicates per kill.
#      Then the same with two workers on a shared spool (`shared = yes`,
#      COURIER_WORKER_ID=w1 and w2), both rounds started together and each
#      killed at its own random point; a kill counts when it landed; the
#      same checks, sending/WORKER/ included.
#   2. disk full for real: a spool on a small tmpfs filled up mid-round.
# Usage: scripts/torture.sh [--records 5000] [--kills 50] [--binary PATH]
set -euo pipefail
cd "$(dirname "$0")/.."

RECORDS=5000
KILLS=50
BINARY=""
while [ $# -gt 0 ]; do
    case $1 in
        --records) RECORDS=$2; shift 2 ;;
        --kills) KILLS=$2; shift 2 ;;
        --binary) BINARY=$2; shift 2 ;;
        *) echo "usage: $0 [--records N] [--kills N] [--binary PATH]" >&2; exit 64 ;;
    esac
done
if [ -z "$BINARY" ]; then
    swift build -c release >/dev/null
    BINARY=.build/release/courier
fi
BINARY=$(readlink -f "$BINARY")

work=$(mktemp -d /tmp/courier-torture-XXXXXX)
sink_pid=""
cleanup() {
    [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null || true
    if mountpoint -q "$work/full" 2>/dev/null; then umount "$work/full"; fi
    rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BINARY" sink --listen "127.0.0.1:$port" --dir "$work/sink" --log "$work/received.tsv" 2>/dev/null &
sink_pid=$!
# Up before any round meets it, however long a loaded machine takes to
# start it: a round that found it not listening would count as a failure.
for _ in $(seq 600); do
    curl -s -o /dev/null "http://127.0.0.1:$port/health" && break
    kill -0 "$sink_pid" 2>/dev/null || break
    sleep 0.1
done
curl -s -o /dev/null "http://127.0.0.1:$port/health" || { echo "FAILED: the sink on 127.0.0.1:$port did not start" >&2; exit 1; }

# campaigns WORKERS: kill -9 campaigns with one worker (the spool as it
# always was), or two on a shared spool; their campaigns are named s1, s2, …
campaigns() {
local workers=$1 prefix="" shared=""
if [ "$workers" -eq 2 ]; then prefix=s; shared="shared = yes"; fi
kills=0
campaign=0
report=""
while [ "$kills" -lt "$KILLS" ]; do
    campaign=$prefix$((${campaign#"$prefix"} + 1))
    spool="$work/spool-$campaign"
    cat > "$work/c$campaign.conf" <<CONF
[courier]
spool = $spool
device-id = torture
settle = 0s
notify = off
$shared

[subscriber sink]
url = http://127.0.0.1:$port/records
concurrency = 8
CONF
    "$BINARY" --config "$work/c$campaign.conf" init >/dev/null
    python3 - "$spool/queued" "$RECORDS" "$campaign" <<'PY'
import json, os, sys
queued, count, campaign = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for i in range(count):
    body = json.dumps({"id": f"t{campaign}-{i:06d}", "kind": "sleep", "data": {"n": i, "pad": "x" * 300}})
    path = os.path.join(queued, f"drop-{i:06d}.json")
    with open(path + ".part", "w") as f:
        f.write(body)
    os.rename(path + ".part", path)
PY
    before=$(wc -l < "$work/received.tsv" 2>/dev/null || echo 0)
    campaign_kills=0
    # Kill rounds at random points until the work is done or enough kills.
    while [ "$kills" -lt "$KILLS" ] && [ "$workers" -eq 1 ]; do
        "$BINARY" --config "$work/c$campaign.conf" --quiet run >/dev/null 2>&1 &
        pid=$!
        # Anywhere from intake to the middle of delivery: 10 to 409 ms.
        sleep "$(printf '0.%03d' $((RANDOM % 400 + 10)))"
        # A kill counts when it landed (the round died of it: 137), not when
        # it met a round that had ended and waited to be reaped (kill(2)
        # succeeds on a zombie), which a loaded machine makes common.
        kill -9 "$pid" 2>/dev/null || true
        status=0
        wait "$pid" 2>/dev/null || status=$?
        if [ "$status" -eq 137 ]; then
            kills=$((kills + 1))
            campaign_kills=$((campaign_kills + 1))
        fi
        if [ -z "$(ls -A "$spool/queued")" ] && [ -z "$(ls -A "$spool/sending")" ]; then break; fi
    done
    # Two workers: both rounds start together, each is killed (timeout's
    # KILL; --foreground, so that timeout reaps it at once rather than leave
    # init a zombie whose tmp/ files count as a live writer's) at its own
    # point, 10 to 409 ms in; a kill counts when the round was still running
    # (exit 137). The work is done when queued/, sending/ and every
    # sending/WORKER/ hold no file.
    while [ "$kills" -lt "$KILLS" ] && [ "$workers" -eq 2 ]; do
        pids=()
        for worker in w1 w2; do
            COURIER_WORKER_ID=$worker timeout --foreground -s KILL "$(printf '0.%03d' $((RANDOM % 400 + 10)))" \
                "$BINARY" --config "$work/c$campaign.conf" --quiet run >/dev/null 2>&1 &
            pids+=($!)
        done
        for pid in "${pids[@]}"; do
            status=0
            wait "$pid" 2>/dev/null || status=$?
            if [ "$status" -eq 137 ]; then
                kills=$((kills + 1))
                campaign_kills=$((campaign_kills + 1))
            fi
        done
        if [ -z "$(find "$spool/queued" "$spool/sending" -type f)" ]; then break; fi
    done
    # Then rounds, unharmed, until everything is delivered (both workers at
    # once on a shared spool).
    for _ in 1 2 3; do
        if [ "$workers" -eq 1 ]; then
            "$BINARY" --config "$work/c$campaign.conf" --quiet run >/dev/null
        else
            COURIER_WORKER_ID=w1 "$BINARY" --config "$work/c$campaign.conf" --quiet run >/dev/null &
            pid=$!
            COURIER_WORKER_ID=w2 "$BINARY" --config "$work/c$campaign.conf" --quiet run >/dev/null
            wait "$pid"
        fi
    done
    python3 - "$spool" "$work/received.tsv" "$work/sink/new" "$campaign" "$RECORDS" "$before" "$campaign_kills" <<'PY'
import os, sys
spool, received, stored, campaign, count, before, kills = sys.argv[1:8]
count, before, kills = int(count), int(before), int(kills)
states = ["queued", "awaitingRoute", "sending", "sent", "failed", "needsAttention"]
seen = {}
for state in states:
    for name in os.listdir(os.path.join(spool, state)):
        if name.startswith("."):
            continue
        path = os.path.join(spool, state, name)
        # A shared spool's sending/WORKER/: its claims are in sending/.
        if state == "sending" and os.path.isdir(path):
            for claim in os.listdir(path):
                if not claim.startswith("."):
                    seen.setdefault(claim, []).append(f"sending/{name}")
            continue
        seen.setdefault(name, []).append(state)
expected = {f"t{campaign}-{i:06d}@sink.json" for i in range(count)}
two = [n for n, s in seen.items() if len(s) > 1]
sent = {n for n, s in seen.items() if s == ["sent"]}
problems = []
if two: problems.append(f"{len(two)} items in two states, e.g. {two[:3]}")
if sent != expected: problems.append(f"{len(expected - sent)} records not in sent/, {len(sent - expected)} unexpected")
if set(seen) - expected: problems.append(f"stray files: {sorted(set(seen) - expected)[:3]}")
orphans = [n for n in os.listdir(os.path.join(spool, "tmp")) if not n.startswith(".")]
if orphans: problems.append(f"{len(orphans)} orphans in tmp/: {orphans[:3]}")
lines = open(received).read().splitlines()[before:]
keys = [line.split("\t")[0] for line in lines]
missing = {f"t{campaign}-{i:06d}" for i in range(count)} - set(keys)
if missing: problems.append(f"{len(missing)} keys never received")
stored_keys = {n[:-5] for n in os.listdir(stored) if n.startswith(f"t{campaign}-")}
if len(stored_keys) != count: problems.append(f"the sink stores {len(stored_keys)} of {count}")
duplicates = len(keys) - len(set(keys))
per_kill = duplicates / kills if kills else 0
status = "ok" if not problems else "FAILED: " + "; ".join(problems)
print(f"campaign {campaign}: {count} records, {kills} kills, {len(keys)} requests, {duplicates} resent "
      f"({per_kill:.1f} per kill), sink stored each once: {len(stored_keys) == count} -> {status}")
sys.exit(1 if problems else 0)
PY
done
echo "total: $kills kills in ${campaign#"$prefix"} campaigns"
}

echo "== kill -9: campaigns of $RECORDS records until $KILLS kills"
campaigns 1
echo "== kill -9, two workers on a shared spool: campaigns of $RECORDS records until $KILLS kills"
campaigns 2

echo "== disk full for real"
mkdir -p "$work/full"
if mount -t tmpfs -o size=3m tmpfs "$work/full" 2>/dev/null; then
    spool="$work/full/spool"
    cat > "$work/full.conf" <<CONF
[courier]
spool = $spool
settle = 0s
notify = off

[subscriber sink]
url = http://127.0.0.1:$port/records
CONF
    "$BINARY" --config "$work/full.conf" init >/dev/null
    python3 - "$spool/queued" <<'PY'
import json, os, sys
for i in range(300):
    with open(os.path.join(sys.argv[1], f"f-{i:04d}.json"), "w") as f:
        f.write(json.dumps({"id": f"full-{i:04d}", "kind": "sleep", "data": "y" * 2000}))
PY
    # Fill what is left, so the round runs out of space part way.
    dd if=/dev/zero of="$work/full/filler" bs=64k 2>/dev/null || true
    truncate -s -12k "$work/full/filler" 2>/dev/null || true
    set +e
    "$BINARY" --config "$work/full.conf" run > "$work/full.out" 2> "$work/full.err"
    status=$?
    set -e
    echo "round on a full disk: exit $status: $(tail -1 "$work/full.err")"
    rm -f "$work/full/filler"
    "$BINARY" --config "$work/full.conf" --quiet run >/dev/null
    "$BINARY" --config "$work/full.conf" --quiet run >/dev/null
    python3 - "$spool" <<'PY'
import os, sys
spool = sys.argv[1]
states = ["queued", "awaitingRoute", "sending", "sent", "failed", "needsAttention"]
seen = {}
for state in states:
    for name in os.listdir(os.path.join(spool, state)):
        seen.setdefault(name, []).append(state)
sent = [n for n, s in seen.items() if s == ["sent"]]
two = [n for n, s in seen.items() if len(s) > 1]
# The ledger survived the full disk in whole lines: every line has nine
# columns and every day file ends in a newline.
ledger = os.path.join(spool, "ledger")
torn = []
for name in os.listdir(ledger):
    data = open(os.path.join(ledger, name), "rb").read()
    if data and not data.endswith(b"\n"): torn.append(name + " (no final newline)")
    torn += [f"{name}: {line[:40]!r}" for line in data.splitlines() if line.count(b"\t") != 8]
ok = len(sent) == 300 and not two and not torn
print(f"after space returned: {len(sent)} of 300 in sent/, {len(two)} in two states, "
      f"{len(torn)} torn ledger lines -> {'ok' if ok else 'FAILED ' + str(torn[:3])}")
sys.exit(0 if ok else 1)
PY
else
    echo "SKIP disk-full: this machine cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)"
fi
echo "== memory: 150 records of 1 MiB in one round"
spool="$work/memory"
cat > "$work/memory.conf" <<CONF
[courier]
spool = $spool
settle = 0s
notify = off
max-record-size = 2MiB

[subscriber sink]
url = http://127.0.0.1:$port/records
concurrency = 8
CONF
"$BINARY" --config "$work/memory.conf" init >/dev/null
python3 - "$spool/queued" <<'PY'
import json, os, sys
for i in range(150):
    with open(os.path.join(sys.argv[1], f"m-{i:04d}.json"), "w") as f:
        f.write(json.dumps({"id": f"mem-{i:04d}", "kind": "sleep", "data": "m" * (1 << 20)}))
PY
python3 - "$BINARY" "$work/memory.conf" "$spool" <<'PY'
import os, resource, subprocess, sys
binary, config, spool = sys.argv[1:4]
subprocess.run([binary, "--config", config, "--quiet", "run"], check=False)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
sent = len(os.listdir(os.path.join(spool, "sent")))
ok = peak <= 64 and sent == 150
print(f"150 x 1 MiB: {sent} sent, peak RSS {peak} MiB (limit 64) -> {'ok' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
PY
echo "torture: all checks passed"
