"""One round of the benchmark under a profiler: bench.py's nginx, records and drop, then
WRAPPER... TOOL-COMMAND, so that courier and the floor are profiled on the same input the same
way (perf stat, perf record -g, strace -c -f).

Usage: bench/profile.py [--n 10000] [--tool courier|floor_mt|floor] [--courier BIN] -- WRAPPER...
  e.g. bench/profile.py --tool courier -- perf stat -e task-clock,context-switches,page-faults
       bench/profile.py --tool floor -- strace -c -f -o floor.strace
The wrapper's own output is left where it puts it; the tool's command is printed on standard
error first, and the round is checked to have sent every record.
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
    parser.add_argument("--tool", choices=("courier", "floor_mt", "floor"), default="courier")
    parser.add_argument("--courier", default=os.path.join(bench.REPO, ".build", "release", "courier"))
    parser.add_argument("wrapper", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    wrapper = args.wrapper[1:] if args.wrapper[:1] == ["--"] else args.wrapper
    options = argparse.Namespace(courier=args.courier, n=args.n, loop_n=10, rounds=1, queue_n=10, big=False,
                                 big_n=10, sink_parent=None, floor=None)
    b = bench.Bench(options)
    env = dict(os.environ)
    try:
        b.start_nginx()
        source = os.path.join(b.work, "records")
        b.make_records(args.n, source)
        if args.tool == "courier":
            spool = b.fresh_spool("spool-run", source)
            command = [b.courier, "--config", b.config(spool), "--quiet", "run"]
        else:
            spool = b.fresh_spool("spool-floor", source, init=False)
            command = [b.floor_mt if args.tool == "floor_mt" else b.floor, spool, b.url]
            if args.tool == "floor":
                env.update(bench.FLOOR_ENV)
        print(f"profile: {' '.join(wrapper + command)} (load {os.getloadavg()[0]:.2f})", file=sys.stderr, flush=True)
        subprocess.run(wrapper + command, check=True, env=env, stdout=subprocess.DEVNULL)
        b.count_sent(spool, args.n, args.tool)
    finally:
        b.stop()


if __name__ == "__main__":
    main()
