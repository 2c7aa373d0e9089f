"""Two courier builds side by side in one run, with curl --parallel 16, the naive durable
peer and the floor (floor_mt), interleaved, N records, R rounds; medians. For before/after
figures in docs/performance.md: the machine's speed varies, ratios within one run do not.

Usage: bench/compare-builds.py OLD-BINARY NEW-BINARY N ROUNDS [batch]

With `batch`, each round also runs both builds in batch mode (100 per request, against a fresh
`courier sink` of the same build, as bench/run does) and the floor in batch mode.

The two builds swap places every round, so give an even ROUNDS: the build that runs second
writes its spool just after the first one's was removed, and on the unjournaled ext4 of these
machines that alone made the second slot 5–10 µs per record slower (2026-12-03: the same two
binaries, 0.064 against 0.068 ms in one order and 0.081 against 0.071 in the other).
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
old, new, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
batch = sys.argv[5:] == ["batch"]
args = argparse.Namespace(courier=new, n=n, loop_n=10, rounds=rounds, queue_n=10, big=False, big_n=10, sink_parent="/dev/shm",
                          floor=None)
b = bench.Bench(args)
try:
    b.start_nginx()
    source = os.path.join(b.work, "records"); b.make_records(n, source)
    files = sorted(os.listdir(source)); cfg = b.curl_config(source, files)
    results = {}
    def run(label, f):
        wall, cpu = f()
        results.setdefault(label, []).append((n / wall, cpu * 1000 / n))
        print(f"  {label:28s} {n/wall:8.0f} records/s {cpu*1000/n:6.3f} CPU ms/record", file=sys.stderr, flush=True)
    for r in range(rounds):
        builds = (("OLD", old), ("NEW", new)) if r % 2 == 0 else (("NEW", new), ("OLD", old))
        for which, binary in builds:
            b.courier = os.path.abspath(binary)
            run(f"courier {which}", lambda: b.courier_trial(source, n))
        run("curl --parallel 16", lambda: b.curl_trial(cfg))
        run("naive durable peer", lambda: b.naive_trial(source, n))
        run(bench.FLOOR_MT, lambda: b.floor_trial(bench.FLOOR_MT, b.floor_mt, source, n))
        if batch:
            for which, binary in builds:
                b.courier = os.path.abspath(binary)
                run(f"courier batch {which}", lambda: b.batch_trial(source, n))
            run(bench.FLOOR_BATCH, lambda: b.floor_batch_trial(source, n))
    print("| tool | records/s (median) | CPU ms/record (median) | runs |\n|---|---:|---:|---|")
    for label, rs in results.items():
        print(f"| {label} | {statistics.median(x[0] for x in rs):,.0f} | {statistics.median(x[1] for x in rs):.3f} | "
              + ", ".join(f"{x[0]:,.0f}" for x in rs) + " |")
finally:
    b.stop()
