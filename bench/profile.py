"""One round of the benchmark under a profiler: bench.py's nginx, records and drop, then
WRAPPER... TOOL-COMMAND, so that courier and the floor are profiled on the same input the same
way (perf stat, perf record -g, strace -c -f).

Usage: bench/profile.py [--n 10000] [--tool courier|floor_mt|floor|shape|curl] [--batch] [--courier BIN] -- WRAPPER...
  e.g. bench/profile.py --tool courier -- perf stat -e task-clock,context-switches,page-faults
       bench/profile.py --tool floor -- strace -c -f -o floor.strace
       bench/profile.py --batch -- perf record -g -o batch.data
With --batch, the round is batch_trial's (100 per request, to a fresh `courier sink` of the
same build; with --tool floor, the floor's batch mode as floor_batch_trial runs it), and the
sink's CPU per record is printed after the round. `--tool curl` is bench.py's curl trial
(`curl --parallel --parallel-max 16 -K CONFIG`, the config written before the wrapper starts),
which keeps nothing, so nothing is counted after it. `--tool shape` is bench/floor/
floor_mt_ordered.c with READS_ON_LOOP=1: the floor with courier's commit order, its HTTP thread
reading the dropped files as courier's loop does (two threads of its own commit, one at a time).
The wrapper's own output is left where it puts it; the tool's command is printed on standard error first, and the round is checked to
have sent every record.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--tool", choices=("courier", "floor_mt", "floor", "shape", "curl"), default="courier")
    parser.add_argument("--batch", action="store_true",
                        help="batch mode (100 per request) against a fresh `courier sink`, as batch_trial")
    parser.add_argument("--courier", default=os.path.join(bench.REPO, ".build", "release", "courier"))
    parser.add_argument("wrapper", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.batch and args.tool in ("floor_mt", "shape"):
        parser.error("--batch: bench.py's batch floor is floor's (--tool floor); compare-orders.py runs "
                     "floor_mt_ordered's batch mode")
    if args.batch and args.tool == "curl":
        parser.error("--batch: curl sends one request a record; bench.py has no batch trial of curl")
    wrapper = args.wrapper[1:] if args.wrapper[:1] == ["--"] else args.wrapper
    options = argparse.Namespace(courier=args.courier, n=args.n, loop_n=10, rounds=1, queue_n=10, big=False,
                                 big_n=10, sink_parent=None, floor=None)
    b = bench.Bench(options)
    env = dict(os.environ)
    sink = None
    try:
        url = b.url
        if args.batch:
            sink, port = b.start_sink()
            url = f"http://127.0.0.1:{port}/transactions/batch"
        else:
            b.start_nginx()
        source = os.path.join(b.work, "records")
        b.make_records(args.n, source)
        if args.tool == "curl":
            # bench.py's curl trial: the same files and headers, its config written before.
            spool = None
            command = ["curl", "-s", "--parallel", "--parallel-max", "16", "-K",
                       b.curl_config(source, sorted(os.listdir(source)))]
        elif args.tool == "courier":
            spool = b.fresh_spool("spool-batch" if args.batch else "spool-run", source)
            command = [b.courier, "--config", b.config(spool, url=url, batch=args.batch), "--quiet", "run"]
        else:
            spool = b.fresh_spool("spool-floor", source, init=False)
            binary = {"floor_mt": b.floor_mt, "floor": b.floor}.get(args.tool) or bench.build_ordered_floor(b.work)
            command = [binary, spool, url]
            if args.tool == "shape":
                env["READS_ON_LOOP"] = "1"
            if args.tool == "floor":
                env.update(bench.FLOOR_ENV)
            if args.batch:
                env["BATCH"] = "100"
        print(f"profile: {' '.join(wrapper + command)} (load {os.getloadavg()[0]:.2f})", file=sys.stderr, flush=True)
        subprocess.run(wrapper + command, check=True, env=env, stdout=subprocess.DEVNULL)
        if sink:
            cpu = b.stop_sink(sink)
            sink = None
            print(f"profile: the sink used {cpu * 1000 / args.n:.3f} CPU ms per record", file=sys.stderr, flush=True)
        if spool:
            b.count_sent(spool, args.n, args.tool)
    finally:
        if sink:
            b.stop_sink(sink)
        b.stop()


if __name__ == "__main__":
    main()
