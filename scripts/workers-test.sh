#!/usr/bin/env bash
# Several workers on one shared spool (docs/design.md §1, "Several workers"),
# proved against `courier sink` on 127.0.0.1:
#   1. kill -9: RECORDS records dropped in 40 waves over about 20 s (the
#      maildir way: tmp/, then rename into queued/) while WORKERS workers
#      (COURIER_WORKER_ID=w1..) run rounds in loops, every other round
#      killed at a random moment, until the last wave and KILLS kills; then
#      rounds run unharmed to the end. Checked: every record in exactly one
#      state folder, sent/; sending/ and every sending/WORKER/ empty; tmp/
#      empty; the sink received every key and stored each exactly once (one
#      201, one new/KEY.json; requests per key reported: a kill may resend,
#      with the same key); every line of every ledger/*.tsv whole; one
#      `accepted` line per key across the workers' ledger files (a second
#      only after a round killed between its ledger lines and its renames);
#      no invalid or needsAttention line.
#   2. records/s with 1 worker and with 2, RECORDS records each, no kills,
#      the same sink, the same checks.
# Usage: scripts/workers-test.sh [--records 20000] [--kills 40] [--workers 4] [--binary PATH] [--keep]
# (--keep leaves the work folder, spools and logs, for a look.)
set -euo pipefail
cd "$(dirname "$0")/.."

RECORDS=20000
KILLS=40
WORKERS=4
BINARY=""
KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
        --records) RECORDS=$2; shift 2 ;;
        --kills) KILLS=$2; shift 2 ;;
        --workers) WORKERS=$2; shift 2 ;;
        --binary) BINARY=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "usage: $0 [--records N] [--kills N] [--workers N] [--binary PATH] [--keep]" >&2; exit 64 ;;
    esac
done
if [ -z "$BINARY" ]; then
    swift build -c release >/dev/null
    BINARY=.build/release/courier
fi
BINARY=$(readlink -f "$BINARY")

work=$(mktemp -d /tmp/courier-workers-XXXXXX)
# The sink stores every record with two fsyncs (and two for its etag) under
# one lock: on a disk that caps it near 125 records/s, and the figures would
# be the sink's. On tmpfs its fsyncs cost nothing; the spools stay on disk.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    sink_dir=$(mktemp -d /dev/shm/courier-workers-sink-XXXXXX)
else
    sink_dir="$work/sink"
fi
sink_pid=""
loops=()
cleanup() {
    # Worker loops stop after their current round (each is bounded by timeout).
    for phase in "$work"/phase-*; do [ -d "$phase" ] && touch "$phase/stop"; done
    for pid in "${loops[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null || true
    if [ "$KEEP" -eq 1 ]; then
        echo "kept: $work (sink store: $sink_dir)" >&2
    else
        rm -rf "$work" "$sink_dir"
    fi
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BINARY" sink --listen "127.0.0.1:$port" --dir "$sink_dir" --log "$work/received.tsv" 2>"$work/sink.err" &
sink_pid=$!
# Up before any round meets it, however long a loaded machine takes to
# start it: a round that found it not listening would count as a failure.
for _ in $(seq 600); do
    curl -s -o /dev/null "http://127.0.0.1:$port/health" && break
    kill -0 "$sink_pid" 2>/dev/null || break
    sleep 0.1
done
curl -s -o /dev/null "http://127.0.0.1:$port/health" || { echo "FAILED: the sink on 127.0.0.1:$port did not start" >&2; exit 1; }

# make_spool NAME: a shared spool and its configuration, $work/NAME.conf.
make_spool() {
    cat > "$work/$1.conf" <<CONF
[courier]
spool = $work/$1
device-id = workers-test
shared = yes
settle = 0s
notify = off
# On a loaded machine the sink (its store fsyncs on the root disk) can
# leave a request unanswered past background-timeout; what this test is
# about is workers and hosts lost, so such a timeout is tried again by a
# later round, as an operator's retry-schedule would, not parked.
retry-schedule = 5s 15s 30s 1m 2m 5m

[subscriber sink]
url = http://127.0.0.1:$port/records
concurrency = 8
CONF
    "$BINARY" --config "$work/$1.conf" init >/dev/null
}

# drop SPOOL PREFIX COUNT [WAVES INTERVAL PROGRESS FIRST]: records
# PREFIX-FIRST.. (FIRST 0 unless given) written into tmp/ and renamed into
# queued/, as a producer following the maildir rule does; in WAVES waves,
# one every INTERVAL seconds (or back to back when writing one takes
# longer), the number dropped so far (FIRST included) written to PROGRESS
# after each.
drop() {
    python3 - "$@" <<'PY'
import json, os, sys, time
spool, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
waves, interval = (int(sys.argv[4]), float(sys.argv[5])) if len(sys.argv) > 5 else (1, 0.0)
progress = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] else None
first = int(sys.argv[7]) if len(sys.argv) > 7 else 0
start = time.monotonic()
dropped = first
count += first
for wave in range(waves):
    size = (count - dropped) // (waves - wave)
    for i in range(dropped, dropped + size):
        name = f"{prefix}-{i:06d}.json"
        body = json.dumps({"id": f"{prefix}-{i:06d}", "kind": "sleep", "data": {"n": i, "pad": "x" * 300}})
        with open(os.path.join(spool, "tmp", name), "w") as f:
            f.write(body)
        os.rename(os.path.join(spool, "tmp", name), os.path.join(spool, "queued", name))
    dropped += size
    if progress:
        with open(progress + ".new", "w") as f:
            f.write(f"{dropped}\n")
        os.rename(progress + ".new", progress)
    time.sleep(max(0.0, start + (wave + 1) * interval - time.monotonic()))
PY
}

# worker ID CONF PHASE: rounds of worker ID in a loop until PHASE/stop.
# Until PHASE/calm exists, every other round is killed (kill -9) at a
# random point of its life: 20 ms in, up to 6/5 of how long this worker's
# last finished round took (at least 100 ms), so that kills land whether
# the machine takes a wave in 100 ms or in 3 s: at startup, recovery,
# intake, delivery, commit or a dead worker's recovery, wherever the round
# is. timeout sends the KILL; with --foreground it lives on and reaps the
# round at once (an orphan left to init can stay a zombie for a while, and
# a zombie's tmp/ files count as a live writer's); with --preserve-status it
# exits as the round did, so a KILL that meets a round already on its way
# out (timeout alone says 124 then, whatever the round's own status) tells
# nothing but the truth: 137 is a kill that landed, noted in PHASE/kills
# with the round it killed (from the round's --verbose "started" line); 0
# is a round that ended before the KILL could land, which is no kill and no
# failure, whether it got to its "finished" line or not (a worker whose
# lock a dead-worker recovery held ends at once, without one); any other
# exit is noted in PHASE/failures. An unharmed round has 300 s.
worker() {
    local id=$1 conf=$2 phase=$3 n=0 status ms span limit killing log began took last=100
    local TIMEFORMAT='%3U %3S'
    while [ ! -e "$phase/stop" ]; do
        n=$((n + 1))
        log="$phase/logs/$id.$n"
        killing=0
        limit=300
        if [ ! -e "$phase/calm" ] && [ $((RANDOM % 2)) -eq 0 ]; then
            killing=1
            echo "$id" >> "$phase/attempts"
            span=$((last * 6 / 5))
            ms=$((20 + RANDOM % (span > 100 ? span : 100)))
            limit=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
        fi
        status=0
        began=${EPOCHREALTIME/./}
        # time: the round's CPU seconds, user and system, into PHASE/cpu.
        { time COURIER_WORKER_ID=$id timeout --foreground --preserve-status -s KILL "$limit" \
            "$BINARY" --config "$conf" --verbose run >/dev/null 2>"$log" || status=$?; } 2>>"$phase/cpu"
        took=$(((${EPOCHREALTIME/./} - began) / 1000))
        if [ "$status" -eq 137 ] && [ "$killing" -eq 1 ]; then
            round=$(sed -n 's/^courier: round \([^ ]*\) (.*) started on .*/\1/p' "$log")
            echo "$id ${ms}ms ${round:--}" >> "$phase/kills"
        elif [ "$status" -ne 0 ]; then
            echo "$id round $n: exit $status: $(grep -v '^courier: sent ' "$log" | tail -3 | tr '\n' ' ')" \
                >> "$phase/failures"
        else
            last=$took
            # A round that finished: the next after a pause, as a timer
            # would start it, rather than a busy loop of empty rounds.
            sleep 0.2
        fi
        rm -f "$log"
    done
}

# start_workers PHASE CONF COUNT: COUNT worker loops, w1.., on CONF.
start_workers() {
    mkdir -p "$1/logs"
    touch "$1/kills" "$1/attempts" "$1/failures" "$1/cpu"
    for i in $(seq "$3"); do
        worker "w$i" "$2" "$1" 2>>"$1/loop-w$i.err" &
        loops+=($!)
    done
}

# stop_workers PHASE: asks the loops to stop and waits for them.
stop_workers() {
    touch "$1/stop"
    for pid in "${loops[@]}"; do wait "$pid" 2>/dev/null || true; done
    loops=()
}

# left SPOOL: files still to deliver (queued/, sending/, every sending/WORKER/).
left() { find "$1/queued" "$1/sending" -type f ! -name '.*' | wc -l; }
sent() { find "$1/sent" -type f | wc -l; }

# drain SPOOL PHASE SECONDS [COUNT]: waits until every record (COUNT, else
# RECORDS) is in sent/ and nothing is left to deliver, or says what it saw
# and fails.
drain() {
    local deadline=$((SECONDS + $3)) count=${4:-$RECORDS}
    while [ "$(left "$1")" -ne 0 ] || [ "$(sent "$1")" -lt "$count" ]; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "FAILED: after $3 s, $(sent "$1") of $count in sent/, $(left "$1") left to deliver" >&2
            COURIER_WORKER_ID=w1 "$BINARY" --config "$1.conf" status >&2 || true
            cat "$2/failures" >&2
            exit 1
        fi
        sleep 0.2
    done
}

# check SPOOL PREFIX PHASE [COUNT]: the invariants over COUNT records (else
# RECORDS); prints what it saw, fails loudly.
check() {
    python3 - "$1" "$2" "${4:-$RECORDS}" "$3" "$sink_dir" "$work/received.tsv" <<'PY'
import collections, os, sys
spool, prefix, count, phase, sink, received = sys.argv[1:7]
count = int(count)
keys = {f"{prefix}-{i:06d}" for i in range(count)}
problems = []

def report(what, bad, detail=""):
    print(f"  {what}: {'FAILED' if bad else 'ok'}{' (' + detail + ')' if detail else ''}")
    if bad:
        problems.append(what)

# Every record's entry in exactly one state folder, and that one sent/.
states = ["queued", "awaitingRoute", "sending", "sent", "failed", "needsAttention"]
seen = collections.defaultdict(list)
claims = {}
for state in states:
    folder = os.path.join(spool, state)
    for name in os.listdir(folder):
        if name.startswith("."):
            continue
        path = os.path.join(folder, name)
        if state == "sending" and os.path.isdir(path):
            inside = [n for n in os.listdir(path) if not n.startswith(".")]
            claims[name] = inside
            for entry in inside:
                seen[entry].append(f"sending/{name}")
        else:
            seen[name].append(state)
expected = {f"{key}@sink.json" for key in keys}
two = sorted(n for n, s in seen.items() if len(s) > 1)
in_sent = {n for n, s in seen.items() if s == ["sent"]}
stray = sorted(set(seen) - expected)
report("every record's entry in exactly one state folder", bool(two),
       f"{len(two)} in two, e.g. {[(n, seen[n]) for n in two[:3]]}" if two else f"{len(seen)} entries")
report("every record in sent/", in_sent != expected,
       f"{len(in_sent & expected)} of {count}; elsewhere: "
       f"{collections.Counter(s[0] for n, s in seen.items() if n in expected and s != ['sent'])}; "
       f"missing: {sorted(expected - set(seen))[:3]}")
report("no other file in a state folder", bool(stray), f"{len(stray)}: {stray[:3]}" if stray else "")
loose = [n for n, s in seen.items() if "sending" in s]
left_behind = {w: len(c) for w, c in claims.items() if c}
report("sending/ and every sending/WORKER/ empty", bool(loose or left_behind),
       f"folders {sorted(claims)}; claims left: {left_behind}, straight in sending/: {loose[:3]}")
orphans = [n for n in os.listdir(os.path.join(spool, "tmp"))]
report("tmp/ empty (no leftovers of dead writers)", bool(orphans), f"{len(orphans)}: {orphans[:3]}" if orphans else "")

# The sink: how many times each key was received (its --log, KEY<TAB>STATUS
# per request), how many times stored (201: stored now; 200: the same key
# and body again, not stored), and its store, new/KEY.json.
requests = collections.Counter()
stored = collections.Counter()
statuses = collections.Counter()
for line in open(received):
    key, status = line.rstrip("\n").split("\t")
    if key.startswith(prefix + "-"):
        requests[key] += 1
        statuses[status] += 1
        if status == "201":
            stored[key] += 1
files = {n[:-5] for n in os.listdir(os.path.join(sink, "new")) if n.startswith(prefix + "-")}
never = keys - set(requests)
not_once = {k: stored[k] for k in keys if stored[k] != 1}
histogram = dict(sorted(collections.Counter(requests[k] for k in keys).items()))
report("the sink received every key", bool(never), f"{len(never)} never, e.g. {sorted(never)[:3]}" if never else "")
report("the sink stored every key exactly once (one 201 per key, one new/KEY.json)",
       bool(not_once) or files != keys or set(statuses) - {"200", "201"},
       f"stored other than once: {dict(list(not_once.items())[:3])}; files {len(files)} of {count}; "
       f"answers {dict(statuses)}")
spread = ", ".join(f"{c} keys {n}x" for n, c in histogram.items())
print(f"  requests per key: {spread} ({sum(requests.values())} requests, "
      f"{sum(requests.values()) - len(requests)} resent after kills)")

# The ledger: every line of every file whole, one accepted line per key.
killed = {}
for line in open(os.path.join(phase, "kills")):
    worker, delay, round_id = line.split()
    killed[round_id] = f"{worker} at {delay}"
ledger = os.path.join(spool, "ledger")
torn = []
accepted = collections.defaultdict(list)
events = collections.Counter()
sent_lines = collections.Counter()
cross = 0
names = sorted(os.listdir(ledger))
total = 0
for name in names:
    data = open(os.path.join(ledger, name), "rb").read()
    if not name.endswith(".tsv"):
        torn.append(f"{name}: not a .tsv file")
        continue
    if data and not data.endswith(b"\n"):
        torn.append(f"{name}: no final newline: {data[-80:]!r}")
    for number, line in enumerate(data.split(b"\n")[:-1], 1):
        total += 1
        columns = line.decode("utf-8", "replace").split("\t")
        if len(columns) != 9:
            torn.append(f"{name}:{number}: {len(columns)} columns: {line[:100]!r}")
            continue
        time, round_id, subscriber, key, event = columns[:5]
        events[event] += 1
        if event == "accepted":
            accepted[key].append((time, round_id, name))
        elif event == "sent":
            sent_lines[key] += 1
        elif event == "recovered" and columns[8].startswith("worker "):
            cross += 1
report(f"every line of the {len(names)} ledger files whole (9 columns, newline-terminated)", bool(torn),
       f"{total} lines: {dict(sorted(events.items()))}" + (f"; torn: {torn[:5]}" if torn else ""))
# A key accepted twice is a broken promise unless every line but its last
# came from a round killed between its group's ledger lines and their
# renames: the ledger goes first (design §10), the dropped file stayed in
# queued/ under its own name, and a later round took it in again. Those
# are shown, with the round and the kill; any other repeat fails.
repeated = {k: sorted(v) for k, v in accepted.items() if len(v) > 1}
unexplained = {k: v for k, v in repeated.items() if any(r not in killed for _, r, _ in v[:-1])}
unaccepted = keys - set(accepted)
report("each key has exactly one accepted line across all workers' ledger files, a second only after a kill",
       bool(unexplained or unaccepted or set(accepted) - keys),
       f"{len(accepted) - len(repeated)} keys with one, {len(repeated)} with more, {len(unaccepted)} with none"
       + "".join(f"; {k}: {[(t, r, f, killed.get(r, 'round not killed')) for t, r, f in v]}"
                 for k, v in list(unexplained.items())[:5]))
if repeated and not unexplained:
    rounds = collections.Counter(r for v in repeated.values() for _, r, _ in v[:-1])
    print(f"    the {len(repeated)} keys with two: the first written by a round killed between its group's ledger"
          f" lines and their renames (ledger first, design §10: the drop stayed in queued/ and a later round took"
          f" it in again): {', '.join(f'{r} ({killed[r]}: {n} keys)' for r, n in rounds.items())}")
attention = events["invalid"] + events["needsAttention"]
report("no invalid or needsAttention line (every record valid, every answer 2xx)", attention > 0,
       f"{events['invalid']} invalid, {events['needsAttention']} needsAttention" if attention else "")
print(f"  sent lines per key: {dict(sorted(collections.Counter(sent_lines[k] for k in keys).items()))}; "
      f"claims of dead workers taken back by another worker: {cross} recovered lines")
if problems:
    print(f"FAILED: {'; '.join(problems)}")
    sys.exit(1)
PY
}

started=$SECONDS
echo "== kill -9: $RECORDS records in waves, $WORKERS workers on a shared spool, until $KILLS kills (sink store: $sink_dir)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
phase="$work/phase-kill"
mkdir -p "$phase"
make_spool kill
start_workers "$phase" "$work/kill.conf" "$WORKERS"
# The records arrive while the workers run, in 40 waves, one every half
# second: the kills fall on rounds with work for as long as records arrive
# (about 20 s), however fast the machine delivers them. The kills go on
# past the last wave until KILLS have landed; a machine that delivers
# everything first (a quiet one, or workers whose kills meet rounds on
# their way out) gets another wave of records, counted in, and so on: the
# campaign ends after KILLS kills that fell on rounds with work.
waves=40
kill_records=$RECORDS
echo 0 > "$phase/dropped"
drop "$work/kill" w "$RECORDS" "$waves" 0.5 "$phase/dropped" &
dropper=$!
loops+=("$dropper")
deadline=$((SECONDS + 300))
kills=0
quarter=0
while :; do
    kills=$(wc -l < "$phase/kills")
    dropped=$(cat "$phase/dropped")
    while [ "$dropped" -ge $(((quarter + 1) * RECORDS / 4)) ]; do
        quarter=$((quarter + 1))
        echo "$((quarter * RECORDS / 4)) records dropped, $(sent "$work/kill") sent, $kills kills ($((SECONDS - started)) s)"
    done
    if [ "$dropped" -eq "$kill_records" ] && [ "$kills" -ge "$KILLS" ]; then break; fi
    if [ "$dropped" -eq "$kill_records" ] && [ "$(left "$work/kill")" -eq 0 ] \
        && [ "$(sent "$work/kill")" -eq "$kill_records" ]; then
        wait "$dropper"
        echo "all $kill_records records delivered after $kills of $KILLS kills: another wave of $((RECORDS / waves))"
        drop "$work/kill" w "$((RECORDS / waves))" 1 0 "$phase/dropped" "$kill_records" &
        dropper=$!
        loops+=("$dropper")
        kill_records=$((kill_records + RECORDS / waves))
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
        echo "FAILED: only $kills of $KILLS kills landed in 300 s ($dropped dropped, $(sent "$work/kill") sent)" >&2
        exit 1
    fi
    sleep 0.2
done
wait "$dropper"
touch "$phase/calm"
echo "$kills kills in $((SECONDS - started)) s; rounds now run unharmed"
drain "$work/kill" "$phase" 300 "$kill_records"
stop_workers "$phase"
# A round killed at its very end may leave its tmp/ file (last-round.json)
# after every other round had begun: the next round removes it. One last
# round per worker, after every kill.
for name in $(ls "$work/kill/tmp"); do
    pid=${name#*.}
    pid=${pid%%_*}
    echo "tmp/ before the last rounds: $name (writer $pid $(kill -0 "$pid" 2>/dev/null && echo alive || echo gone))"
done
for i in $(seq "$WORKERS"); do
    COURIER_WORKER_ID=w$i "$BINARY" --config "$work/kill.conf" --quiet run >/dev/null
done
kills=$(wc -l < "$phase/kills")
echo "kills per worker: $(cut -d' ' -f1 "$phase/kills" | sort | uniq -c | awk '{printf "%s %s  ", $2, $1}')"
echo "kill attempts: $(wc -l < "$phase/attempts"), landed: $kills, of which before the round's first line: $(awk '$3 == "-"' "$phase/kills" | wc -l)"
if [ -s "$phase/failures" ]; then
    echo "FAILED: rounds that failed other than by a kill:"
    cat "$phase/failures"
    exit 1
fi
COURIER_WORKER_ID=w1 "$BINARY" --config "$work/kill.conf" status | sed -n '/^workers/,/^$/p'
echo "checks after $kills kills ($((SECONDS - started)) s):"
check "$work/kill" w "$phase" "$kill_records"
echo "total: $kills kills of $WORKERS workers, $kill_records records, $((SECONDS - started)) s"

echo "== records/s: $RECORDS records, 1 worker and 2 workers, no kills, the same sink"
table="workers  records  seconds  records/s  courier CPU s  load before  load after"
for count in 1 2; do
    phase="$work/phase-bench$count"
    mkdir -p "$phase"
    make_spool "bench$count"
    touch "$phase/calm"
    drop "$work/bench$count" "b$count" "$RECORDS"
    load_before=$(cut -d' ' -f1 /proc/loadavg)
    begin=$(date +%s.%N)
    start_workers "$phase" "$work/bench$count.conf" "$count"
    drain "$work/bench$count" "$phase" 300
    end=$(date +%s.%N)
    stop_workers "$phase"
    load_after=$(cut -d' ' -f1 /proc/loadavg)
    echo "$count worker(s):"
    check "$work/bench$count" "b$count" "$phase"
    cpu=$(awk '{ t += $1 + $2 } END { printf "%.1f", t }' "$phase/cpu")
    table+=$'\n'$(awk -v n="$count" -v r="$RECORDS" -v b="$begin" -v e="$end" -v c="$cpu" -v lb="$load_before" \
        -v la="$load_after" 'BEGIN { printf "%7d  %7d  %7.1f  %9.0f  %13s  %11s  %10s", n, r, e - b, r / (e - b), c, lb, la }')
done
echo "$table"
echo "workers-test: all checks passed in $((SECONDS - started)) s"
