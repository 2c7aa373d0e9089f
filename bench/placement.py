"""Where nginx runs beside each tool's HTTP thread: one round of courier, curl and floor_mt at a
time under `perf sched record`, interleaved, and from each what the scheduler did.

Usage: bench/placement.py [--rounds 5] [--n 10000] [--courier BIN] [--keep DIR]
For each round and tool it prints:
* the HTTP thread's time on a CPU and how many times it was switched in (courier's loop, curl,
  floor_mt's main thread, which is its HTTP thread);
* how many times nginx's worker was switched in, and how many of those (and for how long) on
  the CPU the HTTP thread was on at that moment: each such run takes the HTTP thread's CPU from
  it;
* the HTTP thread's longest sleep (for courier and floor_mt the first group's commit, the
  writeback of the drop);
* the time on a CPU of the tool's other threads (courier's commit thread, floor_mt's intake and
  settle threads) and of nginx: with the HTTP thread's, what the round asks of the two cores;
* the HTTP thread's wall, from its first to its last switch.
Then the medians per tool. perf sched adds its own cost at each switch, so compare the tools
with each other in one run, not with bench.py's records/s.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = ("courier", "curl", "floor_mt")
# A `perf sched timehist` row: time, [cpu], name[tid] or name[tid/pid], wait, delay, run.
ROW = re.compile(r"\s*([\d.]+)\s+\[(\d+)\]\s+(.+?)\[(\d+)(?:/(\d+))?\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")


def switches(perf_data):
    text = subprocess.run(["perf", "sched", "timehist", "-i", perf_data], check=True,
                          capture_output=True, text=True).stdout
    for line in text.splitlines():
        match = ROW.match(line)
        if match:
            time, cpu, name, tid, pid, wait, _, run = match.groups()
            yield float(time), int(cpu), name.strip(), int(tid), pid is None, float(wait), float(run)


def placement(perf_data, tool):
    """The HTTP thread's and nginx's switches of one round, as a dict of figures."""
    rows = list(switches(perf_data))
    command = "courier" if tool == "courier" else tool
    # The tool's main thread, the one switched in most (perf itself execs the tool).
    mains = {}
    for _, _, name, tid, is_main, _, _ in rows:
        if is_main and name.startswith(command):
            mains[tid] = mains.get(tid, 0) + 1
    if not mains:
        raise SystemExit(f"placement: no thread of {tool} in {perf_data}")
    http = max(mains, key=mains.get)
    on_cpu = None
    figures = dict(http_ms=0.0, http_in=0, longest_wait_ms=0.0, others_ms=0.0, nginx_ms=0.0, nginx_in=0,
                   nginx_beside=0, nginx_beside_ms=0.0, first=None, last=None)
    for time, cpu, name, tid, _, wait, run in rows:
        # A row is written when its task is switched out; `run` ended at `time`.
        if tid == http:
            on_cpu = cpu
            figures["http_ms"] += run
            figures["http_in"] += 1
            figures["longest_wait_ms"] = max(figures["longest_wait_ms"], wait)
            figures["first"] = figures["first"] if figures["first"] is not None else time - run / 1000
            figures["last"] = time
        elif name.startswith(command) and figures["first"] is not None:
            figures["others_ms"] += run
        elif name.startswith("nginx") and figures["first"] is not None:
            figures["nginx_ms"] += run
            figures["nginx_in"] += 1
            if cpu == on_cpu:
                figures["nginx_beside"] += 1
                figures["nginx_beside_ms"] += run
    figures["wall_ms"] = (figures["last"] - figures["first"]) * 1000
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--courier", default=os.path.join(HERE, "..", ".build", "release", "courier"))
    parser.add_argument("--keep", help="a folder to keep the perf sched files in")
    args = parser.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="courier-placement-")
    os.makedirs(folder, exist_ok=True)
    results = {tool: [] for tool in TOOLS}
    print("| round | tool | HTTP thread on CPU, ms | switched in | longest sleep, ms | other threads on CPU, ms "
          "| nginx on CPU, ms | nginx switched in | of those on the HTTP thread's CPU | for, ms "
          "| HTTP thread's wall, ms | load |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for index in range(1, args.rounds + 1):
        for tool in TOOLS:
            path = os.path.join(folder, f"{tool}-{index}.sched")
            load = os.getloadavg()[0]
            subprocess.run([sys.executable, os.path.join(HERE, "profile.py"), "--n", str(args.n), "--tool", tool,
                            "--courier", args.courier, "--", "perf", "sched", "record", "-q", "-o", path],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            figures = placement(path, tool)
            results[tool].append(figures)
            share = figures["nginx_beside"] / max(figures["nginx_in"], 1)
            print(f"| {index} | {tool} | {figures['http_ms']:.0f} | {figures['http_in']:,} "
                  f"| {figures['longest_wait_ms']:.0f} | {figures['others_ms']:.0f} | {figures['nginx_ms']:.0f} "
                  f"| {figures['nginx_in']:,} "
                  f"| {figures['nginx_beside']:,} ({share:.0%}) | {figures['nginx_beside_ms']:.0f} "
                  f"| {figures['wall_ms']:.0f} | {load:.2f} |", flush=True)
            if not args.keep:
                os.remove(path)
    print()
    print("| tool (medians) | HTTP thread on CPU, ms | switched in | longest sleep, ms | other threads on CPU, ms "
          "| nginx on CPU, ms | nginx on the HTTP thread's CPU | for, ms | wall, ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for tool in TOOLS:
        rows = results[tool]

        def median(key):
            return statistics.median(row[key] for row in rows)

        share = statistics.median(row["nginx_beside"] / max(row["nginx_in"], 1) for row in rows)
        print(f"| {tool} | {median('http_ms'):.0f} | {median('http_in'):,.0f} | {median('longest_wait_ms'):.0f} "
              f"| {median('others_ms'):.0f} | {median('nginx_ms'):.0f} "
              f"| {share:.0%} | {median('nginx_beside_ms'):.0f} | {median('wall_ms'):.0f} |")
    if not args.keep:
        os.rmdir(folder)


if __name__ == "__main__":
    main()
