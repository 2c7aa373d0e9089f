"""What courier's commit order costs, in C: floor_mt beside floor_mt_ordered (bench/floor/), the same
program with courier's order (ledger fsynced before a settled item's rename; one commit at a time),
with courier and curl --parallel 16 in the same interleaved rounds; medians.

Usage: bench/compare-orders.py COURIER-BINARY N ROUNDS [batch]

If floor_mt_ordered reaches about courier's records/s where floor_mt reaches curl's, the gap left
between courier and the floor is the order the spool's guarantees need, not courier's own work.
The third floor is floor_mt_ordered with READS_ON_LOOP=1: the HTTP thread reads the dropped files
and a thread of its own commits them, as in courier. If it too keeps floor_mt's pace, the reads'
place on the loop is not what costs courier its records/s either; its own work per record is.

With `batch`, every tool but curl sends 100 records a request to a fresh `courier sink` (the
build given): the floor's batch mode as bench/run runs it (floor.c, ASYNC=1: a group's requests go
out before its commit is durable), floor_mt_ordered with BATCH=100 (courier's guarantees: nothing
is sent before its group's commit), the same with READS_ON_LOOP=1, and courier in batch mode.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

ORDERED = "floor_mt_ordered (courier's order)"
ON_LOOP = "the same, reads on the HTTP thread"


def main():
    courier, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    batch = sys.argv[4:] == ["batch"]
    args = argparse.Namespace(courier=courier, n=n, loop_n=10, rounds=rounds, queue_n=10, big=False, big_n=10,
                              sink_parent="/dev/shm", floor=None)
    b = bench.Bench(args)
    try:
        ordered = bench.build_ordered_floor(b.work)
        b.start_nginx()
        source = os.path.join(b.work, "records")
        b.make_records(n, source)
        cfg = b.curl_config(source, sorted(os.listdir(source)))
        results = {}

        def run(label, trial):
            wall, cpu = trial()
            results.setdefault(label, []).append((n / wall, cpu * 1000 / n))
            print(f"  {label:36s} {n / wall:8.0f} records/s {cpu * 1000 / n:6.3f} CPU ms/record", file=sys.stderr,
                  flush=True)

        for r in range(rounds):
            print(f"round {r + 1}: load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
            if batch:
                floors = [(bench.FLOOR_BATCH, b.floor, {**bench.FLOOR_ENV, "BATCH": "100"}),
                          (ORDERED + ", batch", ordered, {"BATCH": "100"}),
                          (ON_LOOP + ", batch", ordered, {"BATCH": "100", "READS_ON_LOOP": "1"})]
            else:
                floors = [(bench.FLOOR_MT, b.floor_mt, None), (ORDERED, ordered, None),
                          (ON_LOOP, ordered, {"READS_ON_LOOP": "1"})]
            # The floors take turns going first: a later slot writes its spool just after the one before
            # it was removed, which alone slows it on these disks.
            for label, binary, env in floors[r % 3:] + floors[:r % 3]:
                if batch:
                    run(label, lambda: sink_trial(b, label, binary, source, n, env))
                else:
                    run(label, lambda: b.floor_trial(label, binary, source, n, env=env))
            if batch:
                run("courier, batch", lambda: b.batch_trial(source, n))
            else:
                run("courier", lambda: b.courier_trial(source, n))
            run("curl --parallel 16", lambda: b.curl_trial(cfg))
        print(f"N = {n:,}, {rounds} rounds, load {os.getloadavg()[0]:.2f} at the end")
        print("| tool | records/s (median) | CPU ms/record (median) | runs |\n|---|---:|---:|---|")
        for label, rows in results.items():
            print(f"| {label} | {statistics.median(x[0] for x in rows):,.0f} | "
                  f"{statistics.median(x[1] for x in rows):.3f} | " + ", ".join(f"{x[0]:,.0f}" for x in rows) + " |")
    finally:
        b.stop()


def sink_trial(b, label, binary, source, n, env):
    """A floor against a fresh `courier sink`, as bench.py's floor_batch_trial runs the floor's batch mode."""
    sink, port = b.start_sink()
    try:
        return b.floor_trial(label, binary, source, n, url=f"http://127.0.0.1:{port}/transactions/batch", env=env)
    finally:
        b.stop_sink(sink)


if __name__ == "__main__":
    main()
