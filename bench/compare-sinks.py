"""Two builds of `courier sink` side by side: the floor in batch mode (floor.c, BATCH=100, the same
client for both) posts N records to a fresh sink of each build in turn, R rounds interleaved;
medians of the client's records/s and of the sink's CPU per record (from /proc, the sink's
threads included). For before/after figures of the sink in docs/performance.md.

Usage: bench/compare-sinks.py OLD-BINARY NEW-BINARY N ROUNDS [STORE-PARENT]
(STORE-PARENT: where the sinks store, /dev/shm by default as in bench/run; a folder on disk
makes the sinks' fsyncs count.)
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
old, new, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
args = argparse.Namespace(courier=new, n=n, loop_n=10, rounds=rounds, queue_n=10, big=False, big_n=10,
                          sink_parent=sys.argv[5] if len(sys.argv) > 5 else None, floor=None)
b = bench.Bench(args)
try:
    source = os.path.join(b.work, "records")
    b.make_records(n, source)
    results = {}
    for r in range(rounds):
        for label, binary in (("sink OLD", old), ("sink NEW", new)):
            # start_sink runs `self.courier sink`: the build under test.
            b.courier = os.path.abspath(binary)
            wall, _ = b.floor_batch_trial(source, n)
            sink_ms = b.sink_cpu_ms[bench.FLOOR_BATCH][-1]
            results.setdefault(label, []).append((n / wall, sink_ms))
            print(f"  round {r + 1}: {label}: {n / wall:8.0f} records/s, sink {sink_ms:6.3f} CPU ms/record",
                  file=sys.stderr, flush=True)
    print(f"store in {b.sink_parent}; load at end {os.getloadavg()[0]:.2f}\n")
    print("| sink | floor batch records/s (median) | sink CPU ms per record (median) | runs, records/s |\n"
          "|---|---:|---:|---|")
    for label, rs in results.items():
        print(f"| {label} | {statistics.median(x[0] for x in rs):,.0f} | {statistics.median(x[1] for x in rs):.3f} | "
              + ", ".join(f"{x[0]:,.0f}" for x in rs) + " |")
finally:
    b.stop()
