#!/usr/bin/env bash
# A shared spool on GlusterFS (docs/scale-out.md), for real: a replica-2
# volume of two bricks in a temporary folder, mounted twice as two "hosts",
# a worker on each (COURIER_WORKER_ID=hostA through mount 1, hostB through
# mount 2, each with its own configuration file), `courier sink` on 127.0.0.1.
#   1. records/s on GlusterFS with one worker, then with two;
#   2. a host lost mid-round: the first host to deliver one of a new batch
#      has its glusterfs client and its worker killed -9 and its mount torn
#      down; how long until the bricks free its lock, and the survivor's
#      next rounds take back sending/WORKER/;
#   3. the promises: every record in sent/ and in no other state, the sink
#      stores each key once, sending/ and every sending/WORKER/ empty, every
#      line of every ledger/*.tsv whole (nine columns, newline-terminated),
#      one `accepted` line per key across the workers' files (but for the
#      files the killed round had accepted and not yet renamed: ledger first).
# settle = 0s: a file one mount shows half-written to the other would be
# flagged, not left for the next round, so the run shows whether close-to-open
# holds between the two clients (docs/scale-out.md).
# Needs root, /dev/fuse, glusterd and mount.glusterfs (Debian: glusterfs-server,
# glusterfs-client); without them it says SKIP and exits 0. Whatever it starts,
# creates or mounts goes when it exits, however it exits.
# Usage: scripts/gluster-test.sh [--records 2000] [--binary PATH]
set -euo pipefail
cd "$(dirname "$0")/.."

RECORDS=2000
BINARY=""
while [ $# -gt 0 ]; do
    case $1 in
        --records) RECORDS=$2; shift 2 ;;
        --binary) BINARY=$2; shift 2 ;;
        *) echo "usage: $0 [--records N] [--binary PATH]" >&2; exit 64 ;;
    esac
done
# Each throughput figure is taken over a quarter as many records as the failover.
MEASURED=$((RECORDS / 4))

skip() {
    echo "SKIP: $*"
    exit 0
}
[ "$(id -u)" -eq 0 ] || skip "not root (a GlusterFS mount needs root)"
[ -c /dev/fuse ] || skip "no /dev/fuse (FUSE is not available here)"
command -v glusterd >/dev/null && command -v gluster >/dev/null ||
    skip "glusterd or gluster not installed (Debian: glusterfs-server)"
command -v mount.glusterfs >/dev/null || [ -x /sbin/mount.glusterfs ] ||
    skip "mount.glusterfs not installed (Debian: glusterfs-client)"

if [ -z "$BINARY" ]; then
    swift build -c release >/dev/null
    BINARY=.build/release/courier
fi
BINARY=$(readlink -f "$BINARY")

work=$(mktemp -d /tmp/courier-gluster-XXXXXX)
volume=courier-test-$$
host=$(hostname)
gl() { gluster --mode=script "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# past START SECONDS: more than SECONDS have passed since START.
past() { awk -v a="$1" -v b="$(now)" -v limit="$2" 'BEGIN { exit !(b - a > limit) }'; }

# What this run made, so that cleanup undoes exactly that and nothing else.
started_glusterd=""
volume_created=""
volume_started=""
daemons=""       # the volume's brick and self-heal processes
clients=""       # the two mounts' glusterfs client processes
sink_pid=""
loops=""
cleanup() {
    set +e
    touch "$work/stop"
    for pid in $loops; do kill -9 -- "-$pid" 2>/dev/null; done
    [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null
    for mount in "$work/m1" "$work/m2"; do
        if mountpoint -q "$mount" 2>/dev/null; then umount "$mount" 2>/dev/null || umount -l "$mount"; fi
    done
    for pid in $clients; do kill -9 "$pid" 2>/dev/null; done
    [ -n "$volume_started" ] && gl volume stop "$volume" force >/dev/null 2>&1
    [ -n "$volume_created" ] && gl volume delete "$volume" >/dev/null 2>&1
    # volume stop ends them; a process glusterd lost track of goes here.
    for pid in $daemons; do
        grep -qF -- "$volume" "/proc/$pid/cmdline" 2>/dev/null && kill -9 "$pid"
    done
    if [ -n "$started_glusterd" ] && [ -f "$work/glusterd.pid" ]; then
        pid=$(cat "$work/glusterd.pid")
        kill "$pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
    fi
    # glusterd names a brick's log after its path.
    rm -f "/var/log/glusterfs/bricks/$(echo "${work#/}" | tr / -)-b1.log" \
        "/var/log/glusterfs/bricks/$(echo "${work#/}" | tr / -)-b2.log" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- GlusterFS: glusterd, a replica-2 volume, two mounts --------------------
if pgrep -x glusterd >/dev/null; then
    echo "using the glusterd already running"
else
    glusterd --log-file="$work/glusterd.log" -p "$work/glusterd.pid" >/dev/null 2>&1 ||
        skip "glusterd did not start: $(tail -1 "$work/glusterd.log" 2>/dev/null)"
    started_glusterd=yes
fi
for _ in $(seq 100); do gl pool list >/dev/null 2>&1 && break; sleep 0.1; done
gl pool list >/dev/null 2>&1 || skip "glusterd does not answer: $(tail -1 "$work/glusterd.log" 2>/dev/null)"
mkdir -p "$work/b1" "$work/b2" "$work/m1" "$work/m2"
# `force`: the bricks are folders on the root file system, which glusterd
# otherwise refuses.
out=$(gl volume create "$volume" replica 2 "$host:$work/b1" "$host:$work/b2" force 2>&1) ||
    skip "glusterd cannot create a volume here: $out"
volume_created=yes
out=$(gl volume start "$volume" 2>&1) || skip "glusterd cannot start a volume here: $out"
volume_started=yes
daemons=$(cat /var/run/gluster/vols/"$volume"/*.pid /var/run/gluster/shd/"$volume"/*.pid 2>/dev/null || true)
for index in 1 2; do
    mount -t glusterfs -o "log-file=$work/m$index.log" "$host:/$volume" "$work/m$index" 2>/dev/null ||
        skip "the GlusterFS mount failed: $(tail -1 "$work/m$index.log" 2>/dev/null)"
    clients="$clients $(pgrep -f -- "--volfile-id=/$volume $work/m$index\$" || true)"
done
echo "== GlusterFS $(glusterd --version | sed -n '1s/^glusterfs //p'): volume $volume, replica 2 on $host, mounted twice"

# --- the spool, the sink, the two hosts' configurations ---------------------
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
for index in 1 2; do
    worker=host$(echo "AB" | cut -c"$index")
    cat > "$work/$worker.conf" <<CONF
[courier]
spool = $work/m$index/spool
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
done
COURIER_WORKER_ID=hostA "$BINARY" --config "$work/hostA.conf" init >/dev/null
spoolB=$work/m2/spool

# drop PREFIX COUNT: records PREFIX-000000…, half through each mount, each
# written under tmp/ and renamed into queued/ (the maildir rule).
drop() {
    local writers=""
    for index in 1 2; do
        python3 - "$work/m$index/spool" "$1" "$2" "$index" <<'PY' &
import json, os, sys
spool, prefix, count, index = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for i in range(index - 1, count, 2):
    name = f"drop-{prefix}-{i:06d}.json"
    with open(os.path.join(spool, "tmp", name), "w") as f:
        f.write(json.dumps({"id": f"{prefix}-{i:06d}", "kind": "sample", "data": {"n": i, "pad": "x" * 300}}))
    os.rename(os.path.join(spool, "tmp", name), os.path.join(spool, "queued", name))
PY
        writers="$writers $!"
    done
    for pid in $writers; do wait "$pid"; done
}
visible() {
    if [ -d "$1" ]; then find "$1" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l; else echo 0; fi
}
claims() { find "$spoolB/sending" -mindepth 2 ! -name '.*' | wc -l; }
round() { COURIER_WORKER_ID=$1 "$BINARY" --config "$work/$1.conf" --quiet run >/dev/null; }

# rate WORKERS...: rounds of these workers at once until every dropped record
# is in sent/; prints records/s.
rate() {
    local start target pid
    target=$(($(visible "$spoolB/sent") + MEASURED))
    start=$(now)
    while [ "$(visible "$spoolB/sent")" -lt "$target" ]; do
        local rounds=""
        for worker in "$@"; do
            round "$worker" &
            rounds="$rounds $!"
        done
        for pid in $rounds; do wait "$pid" || true; done
    done
    awk -v n="$MEASURED" -v s="$(since "$start")" 'BEGIN { printf "%d records in %.1f s: %.0f records/s", n, s, n / s }'
}

echo "== throughput ($MEASURED records of 0.3 KiB each, concurrency 8, courier sink on 127.0.0.1)"
drop one "$MEASURED"
echo "GlusterFS, 1 worker:  $(rate hostA)"
drop two "$MEASURED"
echo "GlusterFS, 2 workers: $(rate hostA hostB)"

# --- a host lost mid-round --------------------------------------------------
# worker_loop WORKER: rounds back to back until $work/stop exists, as a
# process group of its own (its pid), so that one kill takes the loop and
# the round it runs.
worker_loop() {
    setsid bash -c 'while [ ! -e "$0/stop" ]; do
            COURIER_WORKER_ID=$1 "$2" --config "$0/$1.conf" --quiet run >>"$0/$1.log" 2>&1 ||
                echo "a round of $1 exited $?" >>"$0/$1.log"
            sleep 0.1
        done' "$work" "$1" "$BINARY" &
}
echo "== a host lost mid-round: $RECORDS records, hostA and hostB in loops, then the first to deliver one (its client and worker) killed -9"
drop lost "$RECORDS"
worker_loop hostA
loopA=$!
worker_loop hostB
loopB=$!
loops="$loopA $loopB"
disown "$loopA" "$loopB"
# Mid-round: 0 to 499 ms after a host's first delivery of these records is
# in its ledger, when it has requests in flight, answers waiting for their
# group commit, and maybe an intake group between its ledger lines and its
# renames. Whichever host that is: on GlusterFS one worker's intake can keep
# the other waiting for serial.lock for a whole round (docs/scale-out.md),
# and a host that has taken nothing in has nothing to lose.
delivered() { cat "$spoolB"/ledger/*."$1".tsv 2>/dev/null | grep -cP '\tlost-\d+\tsent\t' || true; }
victim=""
for _ in $(seq 1200); do
    for worker in hostA hostB; do
        [ "$(delivered "$worker")" -gt 0 ] && { victim=$worker; break 2; }
    done
    sleep 0.1
done
if [ -z "$victim" ]; then
    echo "FAILED: neither host delivered anything in 120 s"
    echo "queued/ $(visible "$spoolB/queued"), sent/ $(visible "$spoolB/sent"), claims $(claims)"
    for worker in hostA hostB; do
        echo "$worker's rounds:"
        { head -5 "$work/$worker.log"; echo "…"; tail -5 "$work/$worker.log"; } | sed 's/^/  /'
        echo "$worker's ledger, by outcome:"
        cat "$spoolB"/ledger/*."$worker".tsv 2>/dev/null | cut -f5 | sort | uniq -c | sed 's/^/  /'
    done
    exit 1
fi
if [ "$victim" = hostA ]; then
    victimMount=1 survivor=hostB survivorLoop=$loopB victimLoop=$loopA
else
    victimMount=2 survivor=hostA survivorLoop=$loopA victimLoop=$loopB
fi
sleep "$(printf '0.%03d' $((RANDOM % 500)))"
victimClient=$(pgrep -f -- "--volfile-id=/$volume $work/m$victimMount\$" || true)
[ -n "$victimClient" ] && kill -9 $victimClient
kill -9 -- "-$victimLoop"
lost=$(now)
loops=$survivorLoop
# From here on, the spool as the survivor's mount shows it.
spoolB=$work/m$((3 - victimMount))/spool
# What the lost host had claimed (the survivor cannot take it back before
# the lock is free, and recovers at the start of a round).
find "$spoolB/sending/$victim" -mindepth 1 -maxdepth 1 ! -name '.*' -printf '%f\n' > "$work/stranded"
umount -l "$work/m$victimMount"
# How long until the bricks let another client take the lost host's lock.
until flock -n -s "$spoolB/.courier/workers/$victim.lock" true 2>/dev/null; do
    past "$lost" 300 && { echo "FAILED: $victim's lock still held after 300 s"; exit 1; }
    sleep 0.01
done
released=$(since "$lost")
echo "$victim lost: $(wc -l < "$work/stranded") claims stranded in sending/$victim/; its lock free after $released s"
COURIER_WORKER_ID=$survivor "$BINARY" --config "$work/$survivor.conf" status | sed -n '/^workers/,/^$/p'
# The survivor delivers everything.
while [ "$(visible "$spoolB/queued")" -gt 0 ] || [ "$(claims)" -gt 0 ] ||
    [ "$(visible "$spoolB/sent")" -lt $((RECORDS + 2 * MEASURED)) ]; do
    past "$lost" 600 && { echo "FAILED: not delivered 600 s after the host was lost"; break; }
    sleep 0.2
done
done_after=$(since "$lost")
touch "$work/stop"
wait "$survivorLoop" 2>/dev/null || true
loops=""
echo "survivor $survivor: everything in sent/ $done_after s after the host was lost"
echo "$survivor's rounds:"
sed 's/^/  /' "$work/$survivor.log"
echo "tmp/: $(visible "$spoolB/tmp") files left (the lost host's staging files wait for prune's 36 h)"

# --- the promises -----------------------------------------------------------
python3 - "$spoolB" "$work/sink/new" "$work/received.tsv" "$lost" "$MEASURED" "$RECORDS" "$work/stranded" "$victim" <<'PY'
import datetime, os, sys
spool, stored_dir, received, lost, measured, records, stranded, victim = sys.argv[1:9]
stranded = set(open(stranded).read().split())
lost, measured, records = float(lost), int(measured), int(records)
keys = [f"one-{i:06d}" for i in range(measured)] + [f"two-{i:06d}" for i in range(measured)] \
    + [f"lost-{i:06d}" for i in range(records)]
expected = {f"{key}@sink.json" for key in keys}
problems = []

states = ["queued", "awaitingRoute", "sending", "sent", "failed", "needsAttention"]
seen = {}
sending = os.path.join(spool, "sending")
for state in states:
    folder = os.path.join(spool, state)
    for name in os.listdir(folder):
        if name.startswith("."):
            continue
        if state == "sending" and os.path.isdir(os.path.join(folder, name)):
            inner = [n for n in os.listdir(os.path.join(folder, name)) if not n.startswith(".")]
            if inner: problems.append(f"sending/{name}/ holds {len(inner)}, e.g. {inner[:3]}")
            for entry in inner: seen.setdefault(entry, []).append(f"sending/{name}")
            continue
        seen.setdefault(name, []).append(state)
two = [n for n, s in seen.items() if len(s) > 1]
if two: problems.append(f"{len(two)} items in two states, e.g. {[(n, seen[n]) for n in two[:3]]}")
sent = {n for n, s in seen.items() if s == ["sent"]}
if sent != expected:
    problems.append(f"{len(expected - sent)} records not in sent/ (e.g. {[(n, seen.get(n)) for n in sorted(expected - sent)[:3]]})")
if set(seen) - expected: problems.append(f"stray items: {sorted(set(seen) - expected)[:3]}")

stored = [n[:-5] for n in os.listdir(stored_dir) if n.endswith(".json")]
if sorted(stored) != sorted(keys):
    problems.append(f"the sink stores {len(stored)} records for {len(set(stored))} keys, {len(keys)} expected")
requests = [line.split("\t")[0] for line in open(received).read().splitlines()]
resent = len(requests) - len(set(requests))

ledger = os.path.join(spool, "ledger")
torn, accepted, lines, files, last, duplicates = [], {}, 0, sorted(os.listdir(ledger)), {}, 0
for name in files:
    data = open(os.path.join(ledger, name), "rb").read()
    if data and not data.endswith(b"\n"): torn.append(f"{name} ends without a newline: {data[-60:]!r}")
    for line in data.splitlines():
        lines += 1
        columns = line.split(b"\t")
        if len(columns) != 9:
            torn.append(f"{name}: {len(columns)} columns: {line[:60]!r}")
            continue
        last[name] = columns[1].decode()
        if columns[4] == b"duplicate": duplicates += 1
        if columns[4] == b"accepted":
            accepted.setdefault(columns[3].decode(), []).append((name, columns[0].decode(), columns[1].decode()))
if torn: problems.append(f"{len(torn)} torn ledger lines, e.g. {torn[:3]}")
# One `accepted` line per key, but for one case the design makes (§10,
# "Ledger first"): an intake group's lines are fsynced before its renames, so
# a worker killed in between leaves `accepted` lines for files still in
# queued/, which the survivor takes in again and accepts. Only the lost host's last
# round, the one killed, may have such lines, and only for files it had not
# renamed (not among its stranded claims); any other repeat is two workers
# taking in the same file.
killed = [round for name, round in last.items() if f".{victim}." in name]
killed = killed[-1] if killed else None
again = 0
for key, where in accepted.items():
    before = [w for w in where if f".{victim}." in w[0] and w[2] == killed]
    others = [w for w in where if w not in before]
    if len(where) == 1: continue
    if len(before) == 1 and len(others) == 1 and others[0][1] >= before[0][1] \
            and f"{key}@sink.json" not in stranded:
        again += 1
        continue
    problems.append(f"{key} accepted {len(where)} times: {where}")
never = set(keys) - set(accepted)
if never: problems.append(f"{len(never)} keys never accepted, e.g. {sorted(never)[:3]}")
print(f"accepted: one line per key; {again} keys also in the killed round {killed}, "
      "whose lines were written before its renames (ledger first)" if again else
      "accepted: one line per key")

# The survivor's recovery of the lost host's claims, by the ledger's clock.
def seconds(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
recovered = []
for name in files:
    for line in open(os.path.join(ledger, name), "rb").read().splitlines():
        columns = line.decode(errors="replace").split("\t")
        if len(columns) == 9 and columns[4] == "recovered" and f"worker {victim} stopped" in columns[8]:
            recovered.append((seconds(columns[0]), name))
if recovered:
    first = min(recovered)
    print(f"{victim}'s claims: {len(recovered)} recovered by {sorted({n.split('.')[1] for _, n in recovered})}, "
          f"the first {first[0] - lost:.2f} s after the host was lost")
else:
    print(f"{victim}'s claims: none to recover (its round had committed them)")
print(f"ledger: {lines} lines in {len(files)} files ({', '.join(files)}), {duplicates} duplicate; "
      f"sink: {len(requests)} requests for {len(set(requests))} keys ({resent} resent)")
print("checks: " + ("ok" if not problems else "FAILED:\n  " + "\n  ".join(problems)))
sys.exit(1 if problems else 0)
PY
echo "gluster-test: all checks passed"
